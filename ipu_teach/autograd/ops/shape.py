"""Reductions and reshapes."""

import numpy as np

from ..cost import OpCost, Rearrangement, elementwise, reduction
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
    """A view in Poplar (``Tensor::reshape``), except where it merges the channels of a tensor held in channel groups
    with the axes after them (PyTorch's ``flatten`` of a convolution's NCHW output, Keras' Flatten after a Permute
    to channels first): the next op then gets values that are not contiguous on the tiles (see :meth:`cost`)."""

    @staticmethod
    def forward(ctx, x, shape=None):
        return x.reshape(shape)

    infer = classmethod(lambda cls, ctx, x, shape=None: x.reshape(shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shapes[0])

    @classmethod
    def output_layout(cls, ctx):
        """The grouped channel axis where the reshape keeps it, with the same axes after it; else None."""
        kept = _channel_axis_kept(ctx)
        return kept if isinstance(kept, int) else None

    @classmethod
    def cost(cls, ctx):
        """No work, no traffic, but for a reshape that merges grouped channels with the axes after them: in poplin's
        layout of a convolution's output (channel groups, batch, rows, columns, channels in a group) the merged
        axis's neighbours are a group apart, so every value is a region of its own, and the product that reads it
        finds no grouping to regroup by (poplibs lib/poplin/Convolution.cpp@7eac0f2, around l.2572-2619:
        ``detectInnermostGrouping`` gives 1, so ``rearrangeActs``) and copies it into the tensor ``createInputImpl``
        lays out for its plan (``postTransposeActs``, l.947-958), one region per value. PopART's reshape keeps the
        layout: ReshapeOpx copies into a clone of its input before the view, ReshapeInplaceOpx is the view alone
        (popart willow/src/popx/op/reshapex.cpp@d2f20d7, l.25-34). The copy is poplin's, costed here, on the op that
        makes the layout; its gradient goes back the same way."""
        if _channel_axis_kept(ctx) != "merged":
            return OpCost(0, 0, 0, 1)  # a view: no work, no traffic
        elements = int(np.prod(ctx.input_shapes[0]))
        nbytes = elements * ctx.itemsize
        return OpCost(0, nbytes, nbytes, 1, (), (Rearrangement(elements, elements),))


def _channel_axis_kept(ctx):
    """Where a reshape puts its input's grouped channel axis (``ctx.input_layouts[0]``): its index in the output when
    it stays an axis with the same axes after it, ``"merged"`` when the channels (more than one) are merged with the
    axes after them (their values no longer adjacent in memory), None otherwise (no grouped axis, or the channels
    innermost already, so the merge keeps each group's values together, as Keras' channels-last Flatten does)."""
    axis = ctx.input_layouts[0]
    if axis is None:
        return None
    shape, out = tuple(ctx.input_shapes[0]), tuple(ctx.output_shape)
    channels, after = shape[axis], int(np.prod(shape[axis + 1 :]))
    if channels == 1 or after == 1:
        return None
    suffixes = [int(np.prod(out[k:])) for k in range(len(out) + 1)]
    if after not in suffixes:
        return "merged"
    k = suffixes.index(after) - 1
    return k if k >= 0 and out[k] == channels else None
