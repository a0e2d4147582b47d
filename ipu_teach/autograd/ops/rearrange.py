"""Ops that move values without arithmetic: slice, concatenate, reverse, transpose, zero-pad, upsample.

Slicing and concatenating are views in Poplar (a tensor is a list of regions on tiles), so they
cost no superstep, like Reshape. Transposing and padding make a new layout: a copy, one operation
per output element on the vector units (the default cost).
"""

import numpy as np

from ..cost import OpCost
from ..function import Function
from ..symbolic import like, result_dtype


class SliceOp(Function):
    """``x[..., start:stop]`` along ``axis``: how an LSTM splits one product into its gates."""

    @staticmethod
    def forward(ctx, x, axis=-1, start=0, stop=None):
        ctx.where = tuple(slice(start, stop) if a == axis % x.ndim else slice(None) for a in range(x.ndim))
        return x[ctx.where]

    @classmethod
    def infer(cls, ctx, x, axis=-1, start=0, stop=None):
        ctx.where = tuple(slice(start, stop) if a == axis % x.ndim else slice(None) for a in range(x.ndim))
        return like(x, tuple(len(range(n)[where]) for n, where in zip(x.shape, ctx.where)))

    @staticmethod
    def backward(ctx, grad):
        full = np.zeros(ctx.input_shapes[0], dtype=grad.dtype)
        full[ctx.where] = grad
        return full

    @classmethod
    def cost(cls, ctx):
        return OpCost(0, 0, 0, 1)  # a view


class StridedSliceOp(SliceOp):
    """``x[key]`` with TensorFlow's indices (``Tensor.__getitem__``, TF's strided slice): integers, slices with
    steps, ``...`` and ``tf.newaxis``; its gradient is zero outside the values taken. A view, as Slice."""

    @staticmethod
    def forward(ctx, x, key=()):
        ctx.where = key  # Slice's backward puts the gradient back where the values were taken
        return np.array(x[key])

    @classmethod
    def infer(cls, ctx, x, key=()):
        ctx.where = key
        return like(x, np.broadcast_to(np.zeros((), np.int8), x.shape)[key].shape)  # a view of one byte: no values


def strided_slice_key(key) -> tuple:
    """``key`` as a tuple of the indices TensorFlow's ``__getitem__`` takes (an integer tensor of one value counts
    as its integer).

    Raises:
      TypeError: for a list, an array of several values or a float, with TensorFlow's message.
    """
    items = key if isinstance(key, tuple) else (key,)
    checked = []
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, slice):
            checked.append(item)
        elif np.ndim(item) == 0 and np.asarray(item).dtype.kind in "iu" and not isinstance(item, bool):
            checked.append(int(np.asarray(item)))
        else:
            raise TypeError(
                "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 "
                f"tensors are valid indices, got {item!r}"
            )
    return tuple(checked)


class ConcatenateOp(Function):
    """Joins its inputs along ``axis`` (all other axes equal), as ``keras.layers.Concatenate``."""

    @staticmethod
    def forward(ctx, *arrays, axis=-1):
        ctx.axis = axis % arrays[0].ndim
        return np.concatenate(arrays, axis=ctx.axis)

    @classmethod
    def infer(cls, ctx, *arrays, axis=-1):
        ctx.axis = axis % arrays[0].ndim
        others = {a.shape[: ctx.axis] + a.shape[ctx.axis + 1 :] for a in arrays}
        if len(others) > 1:
            raise ValueError(
                f"Concatenate: the inputs' shapes {[a.shape for a in arrays]} differ on an axis other than {ctx.axis}"
            )
        size = sum(a.shape[ctx.axis] for a in arrays)
        return like(
            arrays[0], arrays[0].shape[: ctx.axis] + (size,) + arrays[0].shape[ctx.axis + 1 :], result_dtype(*arrays)
        )

    @staticmethod
    def backward(ctx, grad):
        edges = np.cumsum([shape[ctx.axis] for shape in ctx.input_shapes])[:-1]
        return tuple(np.split(grad, edges, axis=ctx.axis))

    @classmethod
    def cost(cls, ctx):
        return OpCost(0, 0, 0, 1)  # a view


class TransposeOp(Function):
    """Reorders the axes (``perm``), as ``keras.layers.Permute`` and ``np.transpose``."""

    codelet = "transpose"

    @staticmethod
    def forward(ctx, x, perm=None):
        ctx.perm = tuple(perm) if perm is not None else tuple(reversed(range(x.ndim)))
        return np.ascontiguousarray(np.transpose(x, ctx.perm))

    @classmethod
    def infer(cls, ctx, x, perm=None):
        ctx.perm = tuple(perm) if perm is not None else tuple(reversed(range(x.ndim)))
        return like(x, tuple(x.shape[a] for a in ctx.perm))

    @staticmethod
    def backward(ctx, grad):
        return np.transpose(grad, np.argsort(ctx.perm))


class PadOp(Function):
    """Zero padding: ``pads`` holds (before, after) for every axis."""

    @staticmethod
    def forward(ctx, x, pads=()):
        ctx.pads = tuple(tuple(p) for p in pads)
        return np.pad(x, ctx.pads)

    @classmethod
    def infer(cls, ctx, x, pads=()):
        ctx.pads = tuple(tuple(p) for p in pads)
        return like(x, tuple(n + before + after for n, (before, after) in zip(x.shape, ctx.pads)))

    @staticmethod
    def backward(ctx, grad):
        return grad[tuple(slice(before, grad.shape[a] - after) for a, (before, after) in enumerate(ctx.pads))]


class UpsampleOp(Function):
    """Nearest-neighbour upsampling of NHWC ``x``: each value repeated ``size`` (rows, cols) times, as
    ``keras.layers.UpSampling2D``; the gradient sums each block back. A copy (the default cost)."""

    @staticmethod
    def forward(ctx, x, size=(2, 2)):
        ctx.size = tuple(size)
        return np.repeat(np.repeat(x, ctx.size[0], axis=1), ctx.size[1], axis=2)

    @classmethod
    def infer(cls, ctx, x, size=(2, 2)):
        ctx.size = tuple(size)
        n, h, w, c = x.shape
        return like(x, (n, h * ctx.size[0], w * ctx.size[1], c))

    @staticmethod
    def backward(ctx, grad):
        (n, h, w, c), (sh, sw) = ctx.input_shapes[0], ctx.size
        return grad.reshape(n, h, sh, w, sw, c).sum(axis=(2, 4))


class ReverseOp(Function):
    """``x`` reversed along ``axis`` (a backward RNN's outputs put back in time order). A view in Poplar
    (``Tensor::reverse``), so it costs no superstep, as Slice."""

    @staticmethod
    def forward(ctx, x, axis=1):
        ctx.axis = axis
        return np.flip(x, axis=axis).copy()

    @classmethod
    def infer(cls, ctx, x, axis=1):
        ctx.axis = axis
        return like(x)

    @staticmethod
    def backward(ctx, grad):
        return np.flip(grad, axis=ctx.axis).copy()

    @classmethod
    def cost(cls, ctx):
        return OpCost(0, 0, 0, 1)  # a view
