"""``torch.Tensor`` on ipu-teach's autograd: the autograd's Tensor with PyTorch's methods and conventions.

A torch Tensor *is* an ``ipu_teach.autograd.Tensor`` (a subclass adding no state), so every op of the
autograd (the ones the Keras layers are made of) computes on it, records its cost for the simulated IPU
and differentiates it; :func:`wrap` gives an op's result the torch methods. What differs from the autograd's
Tensor is PyTorch's surface: ``shape`` is a ``torch.Size``, ``size()`` a method, ``dtype`` a ``torch.dtype``,
``grad`` a Tensor, reductions take ``dim``/``keepdim``, and ``data`` is PyTorch's: a tensor outside the graph
sharing the values (``output.data.max(dim=1)``, ``p.data.mul_(0.9)``). The numpy array the ops compute on is
``array`` (the autograd's), which ipu-teach's own code reads.

Example:

>>> from ipu_teach import torch
>>> x = torch.tensor([[1.0, -2.0], [3.0, 4.0]], requires_grad=True)
>>> y = (x * x).sum()
>>> y.backward()
>>> y.item(), x.grad
(30.0, tensor([[ 2., -4.],
        [ 6.,  8.]]))
"""

from __future__ import annotations

import builtins
import copy
from collections import namedtuple

import numpy as np

from ..autograd import Tensor as AutogradTensor
from ..autograd import is_grad_enabled, ops
from ..autograd.ops import AbsOp, ExpOp, LogOp, ReLUOp, SigmoidOp, SoftmaxOp, TanhOp
from . import dtype as dtypes
from . import functions
from .random import numpy_generator

_GRAD_SLOT = AutogradTensor.grad  # the autograd's slot, where backward() accumulates numpy gradients

MaxResult = namedtuple("MaxResult", ["values", "indices"])
"""What ``torch.max(x, dim)`` returns (PyTorch's ``torch.return_types.max``)."""


class Size(tuple):
    """A tensor's shape (``torch.Size``): a tuple that prints as PyTorch's."""

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


def wrap(tensor: AutogradTensor) -> Tensor:
    """``tensor`` (an autograd op's result) as a torch Tensor, the same object."""
    tensor.__class__ = Tensor
    return tensor


def apply(function, *inputs, **params) -> Tensor:
    """Apply an autograd Function and give the result the torch methods."""
    return wrap(function.apply(*inputs, **params))


def _dims(dims) -> tuple:
    """``(2, 3)``, ``((2, 3),)`` and ``([2, 3],)`` all mean the shape (2, 3), as PyTorch's varargs do."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list, Size)):
        return tuple(dims[0])
    return tuple(dims)


def _operand(value, like: np.ndarray):
    """A Python number meets a tensor in the tensor's dtype (float16 stays float16, as PyTorch keeps it); a float
    meeting an integer tensor gives float32."""
    if isinstance(value, AutogradTensor):
        return value
    if isinstance(value, (builtins.bool, int, float)) and not isinstance(value, np.ndarray):
        if like.dtype.kind == "f":
            return np.asarray(value, like.dtype)
        return np.asarray(value, np.float32 if isinstance(value, float) else like.dtype)
    return value


def _binary(function_name, reflected=False):
    def method(self, other):
        if isinstance(other, (list, tuple)):  # as PyTorch: so that ``a_list += tensor`` extends the list
            return NotImplemented
        op = getattr(ops, function_name)
        other = _operand(other, self.array)
        return wrap(op(other, self) if reflected else op(self, other))

    return method


def _compare(ufunc):
    def method(self, other):
        return Tensor(ufunc(self.array, other.array if isinstance(other, AutogradTensor) else other))

    return method


def _check_in_place(tensor) -> None:
    if tensor.requires_grad and tensor.node is None and is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation; "
            "wrap it in `with torch.no_grad():` (as optimizers do) or use .detach()"
        )


class Tensor(AutogradTensor):
    """A multi-dimensional array with autograd (``torch.Tensor``); see the module docstring."""

    __slots__ = ()

    # ---- what it is --------------------------------------------------------------------------------------
    shape = property(lambda self: Size(self.array.shape))
    dtype = property(lambda self: dtypes.of_numpy(self.array.dtype))
    device = property(lambda self: "cpu")
    is_leaf = property(lambda self: self.node is None)
    grad_fn = property(lambda self: self.node)
    T = property(lambda self: self.permute(*reversed(range(self.ndim))))
    is_cuda = False

    @property
    def data(self) -> Tensor:
        """PyTorch's ``data``: the same values (shared, not copied) as a tensor that requires no gradient and is
        in no graph; assigning a tensor or an array replaces the values."""
        return Tensor(self.array)

    @data.setter
    def data(self, value):
        self.array = np.asarray(value.array if isinstance(value, AutogradTensor) else value)

    def __deepcopy__(self, memo):
        """A copy with its own values, gradient and flags (``copy.deepcopy`` of a module copies its weights)."""
        copied = type(self).__new__(type(self))
        memo[id(self)] = copied
        for name in AutogradTensor.__slots__:
            slot = AutogradTensor.__dict__[name]  # the autograd's slot (``data`` is redefined above)
            slot.__set__(copied, copy.deepcopy(slot.__get__(self), memo))
        return copied

    @property
    def grad(self):
        grad = _GRAD_SLOT.__get__(self)
        return None if grad is None else Tensor(grad)

    @grad.setter
    def grad(self, value):
        _GRAD_SLOT.__set__(self, value.array if isinstance(value, AutogradTensor) else value)

    def size(self, dim=None):
        return self.shape if dim is None else self.array.shape[dim]

    def dim(self) -> int:
        return self.array.ndim

    def numel(self) -> int:
        return int(self.array.size)

    nelement = numel

    def is_floating_point(self) -> bool:
        return self.array.dtype.kind == "f"

    def __repr__(self):
        data = self.array
        whole = data.dtype.kind != "f" or not np.isfinite(data).all() or (data == np.round(data)).all()
        body = np.array2string(
            data, separator=", ", prefix="tensor(", precision=4, floatmode="maxprec" if whole else "fixed"
        )
        extras = ""
        if self.array.dtype not in (np.float32, np.int64, np.bool_) or self.array.size == 0:
            extras += f", dtype={self.dtype}"
        if self.node is not None:
            extras += f", grad_fn=<{self.node.function.op_name}Backward>"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        return f"tensor({body}{extras})"

    __hash__ = object.__hash__  # comparisons are element-wise, yet tensors are dict keys (optimizer state)

    def __format__(self, spec):
        return format(self.item(), spec) if self.array.size == 1 and spec else repr(self)

    def __bool__(self):
        if self.array.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.array.size} values is ambiguous")
        return builtins.bool(self.array)

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.array.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.array)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # ---- values out ---------------------------------------------------------------------------------------
    def item(self):
        if self.array.size != 1:
            raise RuntimeError(f"a Tensor with {self.array.size} elements cannot be converted to Scalar")
        return self.array.reshape(()).item()

    def tolist(self):
        return self.array.tolist()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self.array

    def detach(self) -> Tensor:
        return Tensor(self.array)

    def clone(self) -> Tensor:
        return apply(functions.Index, self, key=Ellipsis) if self.requires_grad else Tensor(self.array.copy())

    def requires_grad_(self, requires_grad=True) -> Tensor:
        if self.node is not None and not requires_grad:
            raise RuntimeError("you can only change requires_grad flags of leaf variables")
        self.requires_grad = requires_grad
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        super().backward(None if gradient is None else np.asarray(getattr(gradient, "array", gradient)))

    # ---- dtype and device ---------------------------------------------------------------------------------
    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to("cpu")``, ``to(other)``: the simulator's tensors live on the host (PopTorch moves
        them to the IPU itself), so a device is accepted and ignored."""
        target = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, (dtypes.dtype, type)) or (isinstance(arg, np.dtype)):
                target = arg
            elif isinstance(arg, AutogradTensor):
                target = arg.array.dtype
        return self if target is None else self.type(target)

    def type(self, dtype=None):
        if dtype is None:
            return f"torch.{_TYPE_NAMES.get(self.array.dtype, 'Tensor')}"
        target = dtypes.to_numpy(dtype)
        if target == self.array.dtype:
            return self
        if target.kind == "f" and self.array.dtype.kind == "f":
            return wrap(ops.cast(self, target.name))  # differentiable, as PyTorch's .float() / .half()
        return Tensor(self.array.astype(target))

    def cpu(self):
        return self

    def float(self):
        return self.type(dtypes.float32)

    def double(self):
        return self.type(dtypes.float64)

    def half(self):
        return self.type(dtypes.float16)

    def long(self):
        return self.type(dtypes.int64)

    def int(self):
        return self.type(dtypes.int32)

    def bool(self):
        return self.type(dtypes.bool_)

    def type_as(self, other):
        return self.type(other.array.dtype)

    # ---- shapes -------------------------------------------------------------------------------------------
    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (dtypes.dtype, type)):
            raise NotImplementedError("view(dtype) is not simulated: use .type(dtype)")
        return wrap(ops.reshape(self, _dims(shape)))

    reshape = view

    def view_as(self, other):
        return self.view(other.shape)

    reshape_as = view_as

    def contiguous(self):
        return self

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.view(1)
        start, end = start_dim % self.ndim, end_dim % self.ndim
        shape = self.array.shape
        return self.view(shape[:start] + (int(np.prod(shape[start : end + 1])),) + shape[end + 1 :])

    def unsqueeze(self, dim):
        shape = list(self.array.shape)
        shape.insert(dim % (self.ndim + 1), 1)
        return self.view(shape)

    def squeeze(self, dim=None):
        shape = self.array.shape
        if dim is None:
            return self.view(tuple(n for n in shape if n != 1))
        dim %= max(self.ndim, 1)
        return self if self.ndim == 0 or shape[dim] != 1 else self.view(shape[:dim] + shape[dim + 1 :])

    def permute(self, *dims):
        return apply(functions.Transpose, self, perm=tuple(d % self.ndim for d in _dims(dims)))

    def transpose(self, dim0, dim1):
        perm = list(range(self.ndim))
        perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
        return self.permute(perm)

    def t(self):
        return self if self.ndim < 2 else self.transpose(0, 1)

    def expand(self, *sizes):
        sizes = _dims(sizes)
        target = tuple(n if s == -1 else s for s, n in zip(sizes, (1,) * (len(sizes) - self.ndim) + self.array.shape))
        return self + Tensor(np.zeros(target, self.array.dtype))

    def __getitem__(self, key):
        key = _index_key(key)
        if not self.requires_grad:
            return Tensor(np.asarray(self.array[key]))
        return apply(functions.Index, self, key=key)

    def __setitem__(self, key, value):
        _check_in_place(self)
        self.array[_index_key(key)] = getattr(value, "array", value)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.array.shape[0]

    # ---- arithmetic ---------------------------------------------------------------------------------------
    __add__, __radd__ = _binary("add"), _binary("add", reflected=True)
    __sub__, __rsub__ = _binary("sub"), _binary("sub", reflected=True)
    __mul__, __rmul__ = _binary("mul"), _binary("mul", reflected=True)
    __truediv__, __rtruediv__ = _binary("div"), _binary("div", reflected=True)
    __eq__, __ne__ = _compare(np.equal), _compare(np.not_equal)
    __lt__, __le__ = _compare(np.less), _compare(np.less_equal)
    __gt__, __ge__ = _compare(np.greater), _compare(np.greater_equal)
    __and__, __or__ = _compare(np.logical_and), _compare(np.logical_or)
    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def __neg__(self):
        return wrap(ops.neg(self))

    def __matmul__(self, other):
        return wrap(ops.matmul(self, other))

    matmul = mm = __matmul__

    def __pow__(self, exponent):
        if exponent == 2:
            return self * self
        return apply(functions.Power, self, exponent=float(exponent))

    pow = __pow__

    def __invert__(self):
        return Tensor(~self.array)

    def add(self, other, alpha=1):
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other, alpha=1):
        return self - (other if alpha == 1 else other * alpha)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def exp(self):
        return apply(ExpOp, self)

    def log(self):
        return apply(LogOp, self)

    def sqrt(self):
        return apply(functions.Power, self, exponent=0.5)

    def abs(self):
        return apply(AbsOp, self)

    def relu(self):
        return apply(ReLUOp, self)

    def sigmoid(self):
        return apply(SigmoidOp, self)

    def tanh(self):
        return apply(TanhOp, self)

    def clamp(self, min=None, max=None):  # noqa: A002 (PyTorch's names)
        return apply(functions.Clamp, self, low=min, high=max)

    clip = clamp

    def softmax(self, dim):
        return _along_last(self, dim, lambda t: apply(SoftmaxOp, t))

    def log_softmax(self, dim):
        return _along_last(self, dim, _log_softmax_last)

    # ---- reductions ---------------------------------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, dtype=None):
        source = self if dtype is None else self.type(dtype)
        if source.array.dtype.kind in "biu" and dtype is None:
            return Tensor(source.array.sum(axis=_axis(dim), keepdims=keepdim).astype(np.int64))
        return wrap(ops.reduce_sum(source, _axis(dim), keepdim))

    def count_nonzero(self, dim=None):
        """How many elements are not zero (over ``dim``, an int or a tuple, else all), as int64; no gradient."""
        return Tensor(np.asarray(np.count_nonzero(self.array, axis=_axis(dim)), np.int64))

    def mean(self, dim=None, keepdim=False, dtype=None):
        source = self if dtype is None else self.type(dtype)
        if source.array.dtype.kind != "f":
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
                f"dtype. Got: {self.dtype.name.capitalize()}"
            )
        return wrap(ops.reduce_mean(source, _axis(dim), keepdim))

    def var(self, dim=None, unbiased=True, keepdim=False, correction=None):
        correction = (1 if unbiased else 0) if correction is None else correction
        centred = self - self.mean(dim, keepdim=True)
        count = self.numel() if dim is None else int(np.prod([self.array.shape[d] for d in np.atleast_1d(dim)]))
        return (centred * centred).sum(dim, keepdim) / float(max(count - correction, 0))

    def std(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return self.var(dim, unbiased, keepdim, correction).sqrt()

    def max(self, dim=None, keepdim=False):
        if isinstance(dim, AutogradTensor):  # torch.max(a, b): the element-wise maximum
            return where(self.array >= dim.array, self, dim)
        return self._extreme(dim, keepdim, smallest=False)

    def min(self, dim=None, keepdim=False):
        if isinstance(dim, AutogradTensor):
            return where(self.array <= dim.array, self, dim)
        return self._extreme(dim, keepdim, smallest=True)

    def _extreme(self, dim, keepdim, smallest):
        if dim is None:
            flat = self.reshape(-1)
            return apply(functions.MaxAlong, flat, axis=0, keepdims=False, smallest=smallest)
        values = apply(functions.MaxAlong, self, axis=dim, keepdims=keepdim, smallest=smallest)
        index = (np.argmin if smallest else np.argmax)(self.array, axis=dim)
        return MaxResult(values, Tensor(np.expand_dims(index, dim) if keepdim else index))

    def argmax(self, dim=None, keepdim=False):
        return _arg(np.argmax, self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg(np.argmin, self, dim, keepdim)

    def all(self):
        return Tensor(np.all(self.array))

    def any(self):
        return Tensor(np.any(self.array))

    # ---- in place (no graph: what optimizers and initialisers do under no_grad) ---------------------------
    def zero_(self):
        _check_in_place(self)
        self.array[...] = 0
        return self

    def fill_(self, value):
        _check_in_place(self)
        self.array[...] = getattr(value, "array", value)
        return self

    def copy_(self, source):
        _check_in_place(self)
        np.copyto(self.array, np.asarray(getattr(source, "array", source)), casting="unsafe")
        return self

    def add_(self, other, alpha=1):
        _check_in_place(self)
        self.array += np.asarray(getattr(other, "array", other)) * alpha
        return self

    def sub_(self, other, alpha=1):
        return self.add_(other, -alpha)

    def mul_(self, other):
        _check_in_place(self)
        self.array *= np.asarray(getattr(other, "array", other))
        return self

    def div_(self, other):
        _check_in_place(self)
        self.array /= np.asarray(getattr(other, "array", other))
        return self

    def clamp_(self, min=None, max=None):  # noqa: A002
        _check_in_place(self)
        np.clip(self.array, min, max, out=self.array)
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        _check_in_place(self)
        self.array[...] = numpy_generator(generator).uniform(a, b, self.array.shape)
        return self

    def random_(self, from_=0, to=None, generator=None):
        """Integers drawn uniformly from ``[from_, to - 1]`` (``random_(to)`` draws from ``[0, to - 1]``), as
        PyTorch's ``random_``; without bounds, from 0 to the largest integer the dtype holds exactly."""
        _check_in_place(self)
        low, high = (0, from_) if to is None and from_ else (from_, to)
        if high is None:
            kind = self.array.dtype
            high = 2 ** (np.finfo(kind).nmant + 1) + 1 if kind.kind == "f" else int(np.iinfo(kind).max) + 1
        if high <= low:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
        self.array[...] = numpy_generator(generator).integers(low, high, self.array.shape)
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        _check_in_place(self)
        self.array[...] = numpy_generator(generator).normal(mean, std, self.array.shape)
        return self


_TYPE_NAMES = {
    np.dtype(np.float32): "FloatTensor",
    np.dtype(np.float64): "DoubleTensor",
    np.dtype(np.float16): "HalfTensor",
    np.dtype(np.int64): "LongTensor",
    np.dtype(np.int32): "IntTensor",
    np.dtype(np.uint8): "ByteTensor",
    np.dtype(np.bool_): "BoolTensor",
}


def _index_key(key):
    """A key with tensors in it indexes as their arrays do."""
    if isinstance(key, tuple):
        return tuple(k.array if isinstance(k, AutogradTensor) else k for k in key)
    return key.array if isinstance(key, AutogradTensor) else key


def _axis(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _arg(function, tensor, dim, keepdim):
    if dim is None:
        return Tensor(np.asarray(function(tensor.array), np.int64))
    index = function(tensor.array, axis=dim)
    return Tensor(np.expand_dims(index, dim) if keepdim else index)


def _along_last(tensor, dim, function):
    """``function`` (which works along the last axis) applied along ``dim``, moving that axis last and back."""
    dim %= tensor.ndim
    if dim == tensor.ndim - 1:
        return function(tensor)
    return function(tensor.transpose(dim, -1)).transpose(dim, -1)


def _log_softmax_last(x):
    """``x - max - log(sum(exp(x - max)))`` along the last axis; the maximum is a constant shift (its gradient
    cancels), taken outside the graph."""
    shifted = x - Tensor(x.array.max(axis=-1, keepdims=True))
    return shifted - shifted.exp().sum(-1, keepdim=True).log()


# ---- making tensors ---------------------------------------------------------------------------------------


def _array(data, dtype=None) -> np.ndarray:
    """PyTorch's inference of a dtype: Python floats float32, ints int64, bools bool; numpy keeps its own."""
    if isinstance(data, AutogradTensor):
        array = data.array
    elif isinstance(data, (list, tuple)) and any(isinstance(d, AutogradTensor) for d in data):
        array = np.asarray([np.asarray(d.array if isinstance(d, AutogradTensor) else d) for d in data])
    else:
        array = np.asarray(data)
    if dtype is not None:
        return array.astype(dtypes.to_numpy(dtype))
    if not isinstance(data, (np.ndarray, np.generic, AutogradTensor)):
        if array.dtype == np.float64:
            return array.astype(np.float32)
        if array.dtype.kind in "iu":
            return array.astype(np.int64)
    return array


def tensor(data, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of ``data`` (``torch.tensor``)."""
    return Tensor(np.array(_array(data, dtype)), requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    if isinstance(data, Tensor) and dtype is None:
        return data
    return Tensor(_array(data, dtype))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (``torch.from_numpy``)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.of_numpy(array.dtype)
    return Tensor(array)


def is_tensor(value) -> builtins.bool:
    return isinstance(value, Tensor)


def _filled(shape, value, dtype, requires_grad):
    array = np.full(_dims(shape), value, dtype=dtypes.to_numpy(dtype or dtypes.float32))
    return Tensor(array, requires_grad=requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of zeros of shape ``size`` (float32 unless ``dtype``).

    Example:

    >>> from ipu_teach import torch
    >>> torch.zeros(2, 3).shape, torch.zeros(2, dtype=torch.long).dtype
    (torch.Size([2, 3]), torch.int64)
    """
    return _filled(size, 0, dtype, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(size, 1, dtype, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False) -> Tensor:
    return _filled(size, 0, dtype, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False) -> Tensor:
    default = dtypes.int64 if isinstance(fill_value, int) and not isinstance(fill_value, builtins.bool) else None
    return _filled(size, fill_value, dtype or default, requires_grad)


def zeros_like(other, dtype=None, requires_grad=False) -> Tensor:
    return _filled(other.shape, 0, dtype or other.dtype, requires_grad)


def ones_like(other, dtype=None, requires_grad=False) -> Tensor:
    return _filled(other.shape, 1, dtype or other.dtype, requires_grad)


def full_like(other, fill_value, dtype=None, requires_grad=False) -> Tensor:
    return _filled(other.shape, fill_value, dtype or other.dtype, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False) -> Tensor:
    start, end = (0, start) if end is None else (start, end)
    floating = any(isinstance(v, float) for v in (start, end, step))
    default = dtypes.float32 if floating else dtypes.int64
    return Tensor(np.arange(start, end, step, dtype=dtypes.to_numpy(dtype or default)), requires_grad=requires_grad)


def linspace(start, end, steps, dtype=None, device=None) -> Tensor:
    return Tensor(np.linspace(start, end, steps, dtype=dtypes.to_numpy(dtype or dtypes.float32)))


def eye(n, m=None, dtype=None, device=None) -> Tensor:
    return Tensor(np.eye(n, m, dtype=dtypes.to_numpy(dtype or dtypes.float32)))


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    values = numpy_generator(generator).standard_normal(_dims(size))
    return Tensor(values.astype(dtypes.to_numpy(dtype or dtypes.float32)), requires_grad=requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    values = numpy_generator(generator).random(_dims(size))
    return Tensor(values.astype(dtypes.to_numpy(dtype or dtypes.float32)), requires_grad=requires_grad)


def randint(low, high=None, size=None, generator=None, dtype=None, device=None) -> Tensor:
    low, high = (0, low) if high is None else (low, high)
    values = numpy_generator(generator).integers(low, high, tuple(size))
    return Tensor(values.astype(dtypes.to_numpy(dtype or dtypes.int64)))


def randperm(n, generator=None, dtype=None, device=None) -> Tensor:
    return Tensor(numpy_generator(generator).permutation(n).astype(dtypes.to_numpy(dtype or dtypes.int64)))


def cat(tensors, dim=0) -> Tensor:
    tensors = [t if isinstance(t, AutogradTensor) else Tensor(t) for t in tensors]
    return wrap(ops.concatenate(tensors, axis=dim))


concat = cat


def stack(tensors, dim=0) -> Tensor:
    return cat([t.unsqueeze(dim) for t in tensors], dim)


def where(condition, a, b) -> Tensor:
    """``a`` where ``condition`` holds, else ``b``; differentiable in both."""
    mask = np.asarray(getattr(condition, "array", condition), bool)
    a, b = (x if isinstance(x, AutogradTensor) else Tensor(np.asarray(x, np.float32)) for x in (a, b))
    return a * Tensor(mask.astype(a.array.dtype)) + b * Tensor((~mask).astype(b.array.dtype))


def allclose(a, b, rtol=1e-05, atol=1e-08) -> builtins.bool:
    return builtins.bool(np.allclose(a.array, b.array, rtol=rtol, atol=atol))


def equal(a, b) -> builtins.bool:
    return a.shape == b.shape and builtins.bool(np.array_equal(a.array, b.array))


def numel(t) -> int:
    return t.numel()
