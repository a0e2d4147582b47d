"""Dataset elements are arrays, or tuples / dicts of them (nested): helpers that walk that structure."""

import numpy as np


def as_array_structure(value, name):
    """Tuples and dicts stay containers; everything else (lists included, as in tf.data) becomes one array."""
    if isinstance(value, tuple):
        return tuple(as_array_structure(item, f"{name}[{index}]") for index, item in enumerate(value))
    if isinstance(value, dict):
        return {key: as_array_structure(item, f"{name}[{key!r}]") for key, item in value.items()}
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(
            f"Dataset: {name} is not a regular numeric array (got {type(value).__name__} "
            "that numpy can only hold as objects); pass equal-shaped numbers or arrays."
        )
    return array


def map_structure(fn, structure):
    """Apply ``fn`` to every leaf of a tuple/dict structure, keeping the structure."""
    if isinstance(structure, tuple):
        return tuple(map_structure(fn, item) for item in structure)
    if isinstance(structure, dict):
        return {key: map_structure(fn, item) for key, item in structure.items()}
    return fn(structure)


def named_leaves(structure, name):
    """``(name, leaf)`` for every leaf of a structure, named like ``tensors[0]`` for error messages."""
    if isinstance(structure, tuple):
        for index, item in enumerate(structure):
            yield from named_leaves(item, f"{name}[{index}]")
    elif isinstance(structure, dict):
        for key, item in structure.items():
            yield from named_leaves(item, f"{name}[{key!r}]")
    else:
        yield name, structure


def stack(elements):
    """One batch from a list of elements of the same structure and shapes."""
    first = elements[0]
    if isinstance(first, tuple):
        return tuple(stack([element[index] for element in elements]) for index in range(len(first)))
    if isinstance(first, dict):
        return {key: stack([element[key] for element in elements]) for key in first}
    shapes = {element.shape for element in elements}
    if len(shapes) > 1:
        raise ValueError(
            f"Dataset.batch: elements have different shapes {sorted(shapes)}; batching needs one "
            "shape, so .map the elements to a common shape first."
        )
    return np.stack(elements)
