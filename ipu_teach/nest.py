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
