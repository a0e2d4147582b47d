"""ShapedArray: an array of which only the shape and dtype are known, for tracing a model without numerics.

Sizing a model (its compile, its cycles, its memory) needs what each op states about its cost, and every op
states it from shapes alone (``Function.cost``). A Tensor whose ``data`` is a ShapedArray runs no numpy: an op
given one infers its output's shape and dtype (``Function.infer``) instead of computing it, and records the same
cost as a real run. So a ResNet-50 micro-batch is lowered in seconds and a model too big for the host's memory
(a Dense of 20,000 x 20,000) can still be compiled and sized, as Poplar compiles a graph without its data.

Anything that asks for the values (``np.asarray``, ``float()``, indexing, arithmetic) raises
:class:`SymbolicValueError`, naming what was asked, so code that needs numbers cannot silently use none.

Example:

>>> from ipu_teach.autograd import Tensor, ops
>>> x = Tensor(ShapedArray((1024, 20000), np.float32))
>>> w = Tensor(ShapedArray((20000, 20000), np.float32), requires_grad=True)
>>> y = ops.matmul(x, w)
>>> y.shape, y.dtype, is_symbolic(y.data)
((1024, 20000), dtype('float32'), True)
"""

from __future__ import annotations

import math

import numpy as np


class SymbolicValueError(TypeError):
    """A value was asked of an array that has only a shape and a dtype (a shape-only trace)."""


class ShapedArray:
    """The shape and dtype of an array, without its values: what a shape-only trace carries between ops."""

    __slots__ = ("shape", "dtype")
    __array_priority__ = 200

    def __init__(self, shape, dtype):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def astype(self, dtype, copy=True) -> ShapedArray:
        return ShapedArray(self.shape, dtype)

    def reshape(self, *shape) -> ShapedArray:
        """numpy's reshape, one ``-1`` axis inferred."""
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
        return ShapedArray(_reshaped(self.shape, shape), self.dtype)

    def _reduced(self, axis=None, keepdims=False) -> ShapedArray:
        """The shape a reduction over ``axis`` leaves (numpy's ``sum``, ``mean``, ``var``)."""
        axes = range(self.ndim) if axis is None else [a % self.ndim for a in np.atleast_1d(axis)]
        shape = tuple(1 if a in axes else n for a, n in enumerate(self.shape) if keepdims or a not in axes)
        return ShapedArray(shape, self.dtype)

    sum = mean = var = _reduced

    def copy(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"ShapedArray(shape={self.shape}, dtype={self.dtype})"

    def _no_value(self, *args, **kwargs):
        raise SymbolicValueError(
            f"{self!r} has a shape and a dtype but no values (a shape-only trace, as ipu.utils.estimate and "
            "compile-only configurations run): the code asked for its values; run the model on real data instead"
        )

    __array__ = __float__ = __int__ = __bool__ = __index__ = __getitem__ = __setitem__ = __iter__ = _no_value
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _no_value
    __neg__ = __matmul__ = __pow__ = __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _no_value
    __array_ufunc__ = __array_function__ = _no_value
    __hash__ = None  # unhashable, as a numpy array


def _reshaped(shape: tuple, target: tuple) -> tuple:
    """``target`` with a ``-1`` replaced by what the size of ``shape`` leaves, checked as numpy checks it."""
    size, known = math.prod(shape), math.prod(n for n in target if n != -1)
    if list(target).count(-1) == 1 and known and size % known == 0:
        target = tuple(size // known if n == -1 else n for n in target)
    if math.prod(target) != size or -1 in target:
        raise ValueError(f"cannot reshape array of size {size} into shape {target}")
    return tuple(int(n) for n in target)


def is_symbolic(array) -> bool:
    """Whether ``array`` is a ShapedArray (shape and dtype, no values)."""
    return isinstance(array, ShapedArray)


def like(array, shape=None, dtype=None) -> ShapedArray:
    """A ShapedArray of ``array``'s shape and dtype, or of the ``shape`` or ``dtype`` given instead."""
    return ShapedArray(array.shape if shape is None else shape, array.dtype if dtype is None else dtype)


def result_dtype(*arrays) -> np.dtype:
    """The dtype numpy gives an arithmetic result of ``arrays`` (NumPy 2's promotion of arrays)."""
    return np.result_type(*(a.dtype for a in arrays))
