"""The few differentiable ops PyTorch's tensors need that the Keras layers do not: indexing, clamping,
powers, maxima along an axis. The rest of ``ipu_teach.torch`` applies the ops of ``ipu_teach.autograd``."""

import numpy as np

from ..autograd import Function
from ..autograd.cost import OpCost, reduction
from ..autograd.ops import rearrange
from ..autograd.symbolic import like


class Index(Function):
    """``x[key]`` (basic or advanced indexing); the gradient is scattered back, repeated indices adding up."""

    @staticmethod
    def forward(ctx, x, key=None):
        ctx.key = key
        return np.asarray(x[key])

    @classmethod
    def infer(cls, ctx, x, key=None):
        ctx.key = key
        return like(x, np.broadcast_to(np.zeros((), x.dtype), x.shape)[key].shape)  # a view of one value's memory

    @staticmethod
    def backward(ctx, grad):
        full = np.zeros(ctx.input_shapes[0], dtype=grad.dtype)
        np.add.at(full, ctx.key, grad)
        return full

    @classmethod
    def cost(cls, ctx):
        out = int(np.prod(ctx.output_shape))
        return OpCost(0, out * ctx.itemsize, out * ctx.itemsize, max(out, 1))  # a copy


class Clamp(Function):
    """``clip(x, low, high)``; the gradient passes where x is inside the bounds (PyTorch's ``clamp``)."""

    @staticmethod
    def forward(ctx, x, low=None, high=None):
        ctx.save_for_backward(x)
        ctx.bounds = (low, high)
        return np.clip(x, low, high).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        low, high = ctx.bounds
        inside = np.ones(x.shape, bool)
        if low is not None:
            inside &= x >= low
        if high is not None:
            inside &= x <= high
        return grad * inside


class Power(Function):
    """``x ** exponent`` for a constant exponent."""

    codelet = "exp"

    @staticmethod
    def forward(ctx, x, exponent=2.0):
        ctx.save_for_backward(x)
        ctx.exponent = exponent
        return np.power(x, exponent).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return (grad * ctx.exponent * np.power(x, ctx.exponent - 1)).astype(grad.dtype, copy=False)


class MaxAlong(Function):
    """The maximum along one axis; the gradient goes to the first maximum (PyTorch's ``max(dim)`` and
    ``amax`` take the first of ties for the index)."""

    @staticmethod
    def forward(ctx, x, axis=-1, keepdims=False, smallest=False):
        index = (np.argmin if smallest else np.argmax)(x, axis=axis)
        ctx.index, ctx.axis, ctx.keepdims = index, axis % x.ndim, keepdims
        values = np.take_along_axis(x, np.expand_dims(index, axis), axis=axis)
        return values if keepdims else np.squeeze(values, axis)

    @classmethod
    def infer(cls, ctx, x, axis=-1, keepdims=False, smallest=False):
        ctx.axis, ctx.keepdims = axis % x.ndim, keepdims
        return x.sum(axis=axis, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad):
        full = np.zeros(ctx.input_shapes[0], dtype=grad.dtype)
        g = grad if ctx.keepdims else np.expand_dims(grad, ctx.axis)
        np.put_along_axis(full, np.expand_dims(ctx.index, ctx.axis), g, axis=ctx.axis)
        return full

    @classmethod
    def cost(cls, ctx):
        n = int(np.prod(ctx.input_shapes[0]))
        out = max(1, int(np.prod(ctx.output_shape)))
        return OpCost(n, n * ctx.itemsize, out * ctx.itemsize, out, (), reduction(n, out))


class Transpose(rearrange.TransposeOp):
    """The autograd's Transpose (same name, same cost: a copy on the IPU), computed as a numpy view: NCHW layers
    run on the NHWC ops by permuting back and forth, and a view permuted back is contiguous again, so the host
    copies only where an op needs it (the IPU pays for each transpose all the same)."""

    @staticmethod
    def forward(ctx, x, perm=None):
        ctx.perm = tuple(perm) if perm is not None else tuple(reversed(range(x.ndim)))
        return np.transpose(x, ctx.perm)
