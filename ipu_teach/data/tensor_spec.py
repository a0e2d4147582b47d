"""``tf.TensorSpec``: the shape (``None`` where unknown) and dtype of one component of a dataset element.

``Dataset.element_spec`` answers with these, and ``Dataset.from_generator(output_signature=...)``
reads them to check what the generator yields.
"""

import numpy as np

from ..dtypes import as_dtype
from .structure import as_array_structure, map_structure, named_leaves


class TensorSpec:
    """Shape and dtype of a tensor, as ``tf.TensorSpec(shape, dtype=tf.float32, name=None)``."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = tuple(None if d is None else int(d) for d in shape) if shape is not None else None
        self.dtype = as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, value) -> bool:
        """True when ``value`` (an array or a TensorSpec) has this dtype and a shape this one allows."""
        shape, dtype = (
            (value.shape, value.dtype) if isinstance(value, TensorSpec) else (np.shape(value), np.asarray(value).dtype)
        )
        if dtype != self.dtype:
            return False
        if self.shape is None or shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, shape)
        )

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == (
            other.shape,
            other.dtype,
            other.name,
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        shape = (
            "<unknown>"
            if self.shape is None
            else "(" + ", ".join(map(str, self.shape)) + ("," if len(self.shape) == 1 else "") + ")"
        )
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"


def spec_of(structure, unknown_leading=False):
    """The TensorSpec structure of an element; ``unknown_leading`` makes the first axis ``None`` (a batch
    whose last one may be smaller)."""

    def leaf(array):
        shape = np.shape(array)
        if unknown_leading and shape:
            shape = (None,) + tuple(shape[1:])
        return TensorSpec(shape, np.asarray(array).dtype)

    return map_structure(leaf, structure)


def traced_spec(map_func, upstream, call):
    """The element_spec after ``map_func``: call it once on zeros shaped like the upstream element (an unknown
    dimension as 1) and keep the first axis unknown where it was."""
    leaves = [spec for _, spec in named_leaves(upstream, "element")]
    if any(spec.shape is None for spec in leaves):
        raise ValueError(
            "Dataset.element_spec: the shape of an element before .map is unknown; give the "
            "generator an output_signature with shapes"
        )
    zeros = map_structure(
        lambda spec: np.zeros([1 if d is None else d for d in spec.shape], spec.dtype.dtype), upstream
    )
    result = call(map_func, zeros)
    result = as_array_structure(tuple(result) if isinstance(result, list) else result, "the map function's result")
    return spec_of(result, unknown_leading=any(spec.shape and spec.shape[0] is None for spec in leaves))
