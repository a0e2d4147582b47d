"""TensorFlow's dtype names (``tf.float32``, ``tf.int32``...) over numpy dtypes.

A ``DType`` carries its numpy dtype in a ``dtype`` attribute, which numpy reads whenever it is given
an object as a dtype: ``np.asarray(x, tf.float32)``, ``x.astype(tf.int32)`` and
``x.dtype == tf.float32`` all work on plain arrays, so data pipelines need no conversions.
Sources: the names and ``is_floating`` / ``is_integer`` / ``as_numpy_dtype`` / ``max`` / ``min``
of ``tf.dtypes.DType`` (TensorFlow 2.6 API documentation).
"""

import numpy as np


class DType:
    """One TensorFlow dtype: ``name`` (``'float32'``), ``as_numpy_dtype`` (``np.float32``) and ``dtype``."""

    __slots__ = ("name", "dtype")

    def __init__(self, name: str):
        self.name = name
        self.dtype = np.dtype(name)

    @property
    def as_numpy_dtype(self):
        return self.dtype.type

    is_floating = property(lambda self: self.dtype.kind == "f")
    is_integer = property(lambda self: self.dtype.kind in "iu")
    is_bool = property(lambda self: self.dtype.kind == "b")
    is_unsigned = property(lambda self: self.dtype.kind == "u")

    @property
    def size(self) -> int:
        return self.dtype.itemsize

    @property
    def max(self):
        return self._limit("max")

    @property
    def min(self):
        return self._limit("min")

    def _limit(self, end):
        if self.is_floating:
            return getattr(np.finfo(self.dtype), end)
        if self.is_integer:
            return getattr(np.iinfo(self.dtype), end)
        return end == "max"  # bool: False to True

    def __eq__(self, other):
        try:
            return self.dtype == as_dtype(other).dtype
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"tf.{self.name}"


_NAMES = (
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
)
DTYPES = {name: DType(name) for name in _NAMES}


def as_dtype(value) -> DType:
    """``tf.as_dtype``: a DType from a DType, a numpy dtype or type, or a name such as ``'float32'``."""
    if isinstance(value, DType):
        return value
    if value is None:  # numpy would read None as float64
        raise TypeError("Cannot convert None to a TensorFlow dtype; pass one such as tf.float32")
    try:
        name = np.dtype(value).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise TypeError(
            f"Cannot convert {value!r} to a TensorFlow dtype that ipu-teach simulates; use one of: {', '.join(_NAMES)}"
        )
    return DTYPES[name]
