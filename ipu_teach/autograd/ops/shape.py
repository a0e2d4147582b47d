"""Reductions and reshapes."""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import ShapedArray


def _normalise_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim for a in axes)


class SumOp(Function):
    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.axes = _normalise_axis(axis, x.ndim)
        return np.asarray(x.sum(axis=ctx.axes, keepdims=keepdims))

    @classmethod
    def infer(cls, ctx, x, axis=None, keepdims=False):
        ctx.axes = _normalise_axis(axis, x.ndim)
        return ShapedArray(x.sum(axis=ctx.axes, keepdims=keepdims).shape, np.empty(0, x.dtype).sum().dtype)

    @staticmethod
    def backward(ctx, grad):
        (shape,) = ctx.input_shapes
        kept = np.expand_dims(grad, ctx.axes) if grad.ndim != len(shape) else grad
        return np.broadcast_to(kept, shape).copy()

    @classmethod
    def cost(cls, ctx):
        """``popops::reduce`` (a Mean's scale is fused into its last stage, as popops' scaled reduce does)."""
        n = int(np.prod(ctx.input_shapes[0]))
        out = max(1, int(np.prod(ctx.output_shape)))
        return OpCost(n, n * ctx.itemsize, out * ctx.itemsize, out, (), reduction(n, out))

    @classmethod
    def backward_cost(cls, ctx):
        """The gradient broadcast back over the reduced axes (and scaled, for a Mean): one pass."""
        n = int(np.prod(ctx.input_shapes[0]))
        out = max(1, int(np.prod(ctx.output_shape)))
        return OpCost(n, out * ctx.itemsize, n * ctx.itemsize, n, (), elementwise("add", n, out))


class MeanOp(SumOp):
    @staticmethod
    def forward(ctx, x, axis=None, keepdims=False):
        ctx.axes = _normalise_axis(axis, x.ndim)
        ctx.count = int(np.prod([x.shape[a] for a in ctx.axes]))
        return np.asarray(x.mean(axis=ctx.axes, keepdims=keepdims), dtype=x.dtype)

    @classmethod
    def infer(cls, ctx, x, axis=None, keepdims=False):
        ctx.axes = _normalise_axis(axis, x.ndim)
        ctx.count = int(np.prod([x.shape[a] for a in ctx.axes]))
        return x.mean(axis=ctx.axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad):
        return SumOp.backward(ctx, grad / ctx.count)


class ReshapeOp(Function):
    view = True

    @staticmethod
    def forward(ctx, x, shape=None):
        return x.reshape(shape)

    infer = classmethod(lambda cls, ctx, x, shape=None: x.reshape(shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0])

    @classmethod
    def cost(cls, ctx):
        return OpCost(0, 0, 0, 1)  # a view: no work, no traffic
