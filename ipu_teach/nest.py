"""Nested lists, tuples and dicts of values (a model's several inputs, an outfeed's element), as ``tf.nest``
sees them; it imports nothing of ours, so any module may use it."""


def leaves(structure) -> list:
    """The values of a nested structure of lists, tuples and dicts, in order (a dict's in its own order).

    Example:

    >>> leaves([1, (2, {"a": 3, "b": [4]})])
    [1, 2, 3, 4]
    """
    if isinstance(structure, dict):
        return [leaf for item in structure.values() for leaf in leaves(item)]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in leaves(item)]
    return [structure]


def map_structure(function, structure):
    """``structure`` with ``function`` applied to each leaf: the same lists, tuples and dicts, new ones.

    Example:

    >>> map_structure(lambda x: x * 10, [1, (2, {"a": 3})])
    [10, (20, {'a': 30})]
    """
    if isinstance(structure, dict):
        return {key: map_structure(function, item) for key, item in structure.items()}
    if isinstance(structure, (list, tuple)):
        items = [map_structure(function, item) for item in structure]
        return items if isinstance(structure, list) else tuple(items)
    return function(structure)
