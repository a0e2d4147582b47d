"""The Tensor: a numpy array that remembers how it was made, so gradients can flow back."""

from __future__ import annotations

import contextlib

import numpy as np

from ..session import OpenBlocks
from .graph_order import post_order
from .symbolic import ShapedArray

DEFAULT_FLOAT = np.float32

_grad_enabled = OpenBlocks([True])


@contextlib.contextmanager
def no_grad():
    """Run ops without recording the graph (inference: evaluate, predict)."""
    with _grad_enabled.pushed(False):
        yield


def is_grad_enabled() -> bool:
    return _grad_enabled[-1]


def _as_array(value) -> np.ndarray:
    """Python numbers and lists become float32; numpy float64 stays (gradient checks run in float64), and so
    does float16 (half-precision layers); a ShapedArray (shape and dtype only, ``autograd.symbolic``) stays."""
    if isinstance(value, ShapedArray):
        return value
    array = np.asarray(value)
    if array.dtype.kind == "f":
        keep = array.dtype in (np.float16, np.float32, np.float64) and isinstance(value, (np.ndarray, np.generic))
        return array if keep else array.astype(DEFAULT_FLOAT)
    if array.dtype.kind in "iub" and not isinstance(value, np.ndarray):
        return array.astype(DEFAULT_FLOAT)
    return array


class Node:
    """The op application that produced a tensor: what to call on the way back."""

    __slots__ = ("function", "ctx", "inputs")

    def __init__(self, function, ctx, inputs):
        self.function, self.ctx, self.inputs = function, ctx, inputs


def _operator(function_name: str, reflected: bool = False):
    """A Tensor operator method that applies ``ops.<function_name>`` (to ``other, self`` when ``reflected``)."""

    def method(self, other):
        op = getattr(_ops(), function_name)
        return op(other, self) if reflected else op(self, other)

    return method


class Tensor:
    """An array with an optional gradient and a link to the op that produced it: the autograd's value.

    Layers compute on Tensors; ``backward()`` walks the ops back from a result and fills the ``grad`` of
    every Tensor that ``requires_grad`` (the weights). ``data`` is the numpy array itself, also named ``array``
    (the name ipu-teach's code uses where a front end may redefine ``data``, as PyTorch's).

    Args:
      data: Array-like, the value.
      requires_grad: Boolean, whether gradients flow to it. Default: False.
      name: Optional name (weights are named ``"<layer>/<weight>:0"``).

    Example:

    >>> from ipu_teach.autograd import Tensor, ops
    >>> w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True, name="w")
    >>> loss = ops.reduce_sum(ops.mul(w, w))
    >>> loss.backward()
    >>> w.grad
    array([2., 4.], dtype=float32)
    """

    __slots__ = ("data", "grad", "requires_grad", "node", "name", "_keras_mask")
    __array_priority__ = 100  # numpy defers to Tensor's operators: array + tensor -> Tensor

    def __init__(self, data, requires_grad: bool = False, name: str | None = None):
        self.array = _as_array(data)
        self.grad = None
        self.requires_grad = requires_grad
        self.node = None
        self.name = name
        self._keras_mask = None  # a Keras layer's output mask (Embedding(mask_zero=True)), as TF tensors carry it

    shape = property(lambda self: self.array.shape)
    dtype = property(lambda self: self.array.dtype)
    ndim = property(lambda self: self.array.ndim)
    size = property(lambda self: self.array.size)

    def numpy(self) -> np.ndarray:
        return self.array

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """numpy reads a Tensor as its values (``np.argmax(model(x), axis=-1)``, ``np.asarray``, the ``tf``
        functions), as it reads TensorFlow's eager tensors; the result carries no gradient."""
        array = np.asarray(self.array) if dtype is None else self.array.astype(dtype, copy=False)
        return array.copy() if copy else array

    def __float__(self) -> float:
        return float(self.array)

    def __len__(self):
        return len(self.array)

    def __getitem__(self, key):
        """``x[:, b:e]`` as on a TensorFlow tensor (integers, slices, ``...``, ``tf.newaxis``), keeping the gradient
        (a Lambda layer that slices its input trains)."""
        return _ops().strided_slice(self, key)

    def __repr__(self):
        name = f", name={self.name!r}" if self.name else ""
        return f"Tensor(shape={self.shape}, dtype={self.dtype}{name})"

    def backward(self, grad=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf tensor that requires a gradient."""
        if grad is None:
            if self.array.size != 1:
                raise ValueError(f"backward() without a gradient needs a scalar tensor, got shape {self.shape}")
            grad = np.ones_like(self.array)
        order = _topological_order(self)
        consumers = _consumers(order)
        grads = {id(self): np.asarray(grad, dtype=self.array.dtype)}
        for tensor in reversed(order):
            g = grads.pop(id(tensor), None)
            if g is None:
                continue
            node = tensor.node
            if node is None:
                tensor.grad = g if tensor.grad is None else tensor.grad + g
                continue
            node, input_grads = _node_backward(node, g, consumers)
            if not isinstance(input_grads, tuple):
                input_grads = (input_grads,)
            for parent, parent_grad in zip(node.inputs, input_grads):
                if parent_grad is None or not parent.requires_grad:
                    continue
                key = id(parent)
                grads[key] = parent_grad if key not in grads else grads[key] + parent_grad

    # Arithmetic delegates to ops (imported late, to avoid an import cycle); the reflected forms swap operands.
    __add__, __radd__ = _operator("add"), _operator("add", reflected=True)
    __sub__, __rsub__ = _operator("sub"), _operator("sub", reflected=True)
    __mul__, __rmul__ = _operator("mul"), _operator("mul", reflected=True)
    __truediv__, __rtruediv__ = _operator("div"), _operator("div", reflected=True)

    def __neg__(self):
        return _ops().neg(self)

    def __matmul__(self, other):
        return _ops().matmul(self, other)

    def sum(self, axis=None, keepdims=False):
        return _ops().reduce_sum(self, axis, keepdims)

    def mean(self, axis=None, keepdims=False):
        return _ops().reduce_mean(self, axis, keepdims)

    def reshape(self, *shape):
        return _ops().reshape(self, shape[0] if len(shape) == 1 else shape)


def _ops():
    from . import ops

    return ops


Tensor.array = Tensor.data
"""The numpy array itself: the slot ``data`` names, under a name no front end redefines (PyTorch's ``data`` is a
tensor, so ``ipu_teach.torch.Tensor`` redefines ``data``); the autograd and the torch front end read this."""


def _topological_order(root: Tensor) -> list:
    """Tensors that require gradients, each after all of its inputs."""
    return post_order([root], lambda t: [p for p in t.node.inputs if p.requires_grad] if t.node is not None else [])


def _consumers(order) -> dict:
    """How many times the ops that made the tensors of ``order`` take each tensor (by id) as an input: the uses
    that send it gradients in this backward pass."""
    counts = {}
    for tensor in order:
        for parent in tensor.node.inputs if tensor.node is not None else ():
            counts[id(parent)] = counts.get(id(parent), 0) + 1
    return counts


def _node_backward(node, grad, consumers) -> tuple:
    """(the node whose inputs the gradients are for, the gradients): ``node``'s backward, or, where its one input was
    made by another op for it alone, both backwards at once if ``node``'s op fuses them (``Function.backward_through``).
    That input comes just before ``node``'s output in the topological order (it is reached only through it), so the
    producer's backward runs where it would have run: every gradient is summed in the same order."""
    if len(node.inputs) == 1:
        (made,) = node.inputs
        if made.node is not None and consumers.get(id(made)) == 1:
            through = node.function.backward_through(node.ctx, grad, made.node)
            if through is not None:
                return made.node, through
    return node, node.function.backward(node.ctx, grad)


def as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)
