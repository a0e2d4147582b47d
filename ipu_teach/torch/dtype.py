"""PyTorch's dtypes (``torch.float32``...), each standing for one numpy dtype.

A ``torch.dtype`` prints as PyTorch's (``torch.float32``), compares equal to its numpy dtype and has a
``dtype`` attribute, so numpy accepts it wherever it takes a dtype (``array.astype(torch.float32)``).

Example:

>>> from ipu_teach import torch
>>> torch.float32, torch.float32 == np.float32, np.zeros(2, torch.int64).dtype
(torch.float32, True, dtype('int64'))
"""

import numpy as np


class dtype:  # noqa: N801 (PyTorch's name)
    """One of PyTorch's element types; ``.dtype`` is the numpy dtype the values are stored in."""

    def __init__(self, name: str, numpy_dtype):
        self.name = name
        self.dtype = np.dtype(numpy_dtype)
        self.is_floating_point = self.dtype.kind == "f"
        self.itemsize = self.dtype.itemsize

    def __repr__(self):
        return f"torch.{self.name}"

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self.dtype == other.dtype
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)


float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
float16 = dtype("float16", np.float16)
int64 = dtype("int64", np.int64)
int32 = dtype("int32", np.int32)
int16 = dtype("int16", np.int16)
int8 = dtype("int8", np.int8)
uint8 = dtype("uint8", np.uint8)
bool_ = dtype("bool", np.bool_)

ALL = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_)
_BY_NUMPY = {d.dtype: d for d in ALL}


def of_numpy(numpy_dtype) -> dtype:
    """The torch dtype of a numpy dtype; a dtype PyTorch lacks is refused, saying which it has."""
    found = _BY_NUMPY.get(np.dtype(numpy_dtype))
    if found is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(numpy_dtype)}: the supported types are "
            + ", ".join(f"numpy.{d.dtype}" for d in ALL)
        )
    return found


def to_numpy(value):
    """The numpy dtype of a torch dtype, a numpy dtype or a Python type (``float``: float32, as PyTorch)."""
    if value is float:
        return np.dtype(np.float32)
    if value is int:
        return np.dtype(np.int64)
    if value is bool:
        return np.dtype(np.bool_)
    return value.dtype if isinstance(value, dtype) else np.dtype(value)
