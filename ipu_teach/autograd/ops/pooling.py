"""Max and average pooling over NHWC windows, one vectorised pass per window offset, a block of samples at a time."""

import numpy as np

from ..cost import OpCost, VectorPass
from ..function import Function
from ..symbolic import like
from . import parallel
from .conv import crop_nhwc, pad_nhwc, window_geometry, window_slices

CACHE_BLOCK = 2**17
"""Values of max pooling's input worked on at a time (512 KiB of float32). Max pooling makes several passes over
its windows (the maxima so far, the comparisons that note the first maximum; in the backward, one per window
offset): over the tutorial's first layer whole (1.4 million values), each pass's operands come from memory; a block
of samples at a time, they stay in a core's cache from one pass to the next. Measured alone on that layer (one
thread): the forward 2.3 -> 1.8 ms, the backward's routing 1.8 -> 1.6 ms (benchmarks/README.md, seventh round)."""


def cache_blocks(samples: slice, array: np.ndarray) -> list:
    """``samples`` (a slice with a start and a stop) of ``array`` (samples first) as consecutive slices of at most
    ``CACHE_BLOCK`` values (at least one sample a block; none for an empty batch)."""
    per_block = max(1, CACHE_BLOCK // max(1, int(np.prod(array.shape[1:]))))
    starts = range(samples.start, samples.stop, per_block)
    return [slice(start, min(start + per_block, samples.stop)) for start in starts]


class _Pool(Function):
    @classmethod
    def cost(cls, ctx):
        """One pass over the windows (an add per window element). popnn plans a partition of its own for the
        pooling (poplibs lib/popnn/Pooling.cpp@7eac0f2, poolingImpl: the plan's channel groups and its vertices'
        tiles), so the pass first receives its input in that layout, not where the previous op made it."""
        return cls._window_pass(ctx, gathered=cls._sizes(ctx)[0])

    @classmethod
    def _sizes(cls, ctx) -> tuple:
        """``(inputs, outputs)``: how many values the pooling reads and writes."""
        (xs,), out = ctx.input_shapes, ctx.output_shape
        return int(np.prod(xs)), int(np.prod(out))

    @classmethod
    def _window_pass(cls, ctx, gathered: int) -> OpCost:
        """The pass over every output's window, after receiving ``gathered`` values in the plan's layout."""
        inputs, outputs = cls._sizes(ctx)
        window = ctx.geometry[0][0] * ctx.geometry[0][1]
        vector = (VectorPass("add", outputs * window, gathered=gathered),)
        return OpCost(outputs * window, inputs * ctx.itemsize, outputs * ctx.itemsize, outputs, (), vector)

    @classmethod
    def infer(cls, ctx, x, pool_size=(2, 2), strides=None, padding="valid"):
        strides = strides or pool_size
        pads, outs = window_geometry(x.shape, pool_size, strides, padding)
        ctx.geometry = (pool_size, strides, pads, outs)
        return like(x, (x.shape[0], *outs, x.shape[3]))

    @staticmethod
    def _offsets(pool):
        return [(i, j) for i in range(pool[0]) for j in range(pool[1])]


class MaxPool2DOp(_Pool):
    """Backward routes each window's gradient to its *first* maximum (row-major), as TensorFlow does;
    MNIST's flat backgrounds make ties common, and splitting among ties would differ from Keras.

    Windows that tile the input (strides equal to the pool size, the usual case): the forward notes which window
    offset holds each window's first maximum (an offset takes over only where it changes the maximum so far, that
    is where it is strictly greater; a window with a NaN, whose maximum is NaN, routes nothing, as ``x == NaN`` is
    never true), and the backward routes by that note, instead of comparing every input with its window's maximum
    over numpy's short runs (one pixel's channels): forward and backward together take a quarter less time, with
    the same bits.
    """

    @staticmethod
    def forward(ctx, x, pool_size=(2, 2), strides=None, padding="valid"):
        strides = strides or pool_size
        pads, outs = window_geometry(x.shape, pool_size, strides, padding)
        xp = pad_nhwc(x, pads, value=-np.inf)
        offsets = MaxPool2DOp._offsets(pool_size)
        windows = [xp[window_slices(i, j, outs, strides)] for i, j in offsets]
        tiled = tuple(strides) == tuple(pool_size)
        first = (
            np.zeros(windows[0].shape, np.min_scalar_type(len(offsets))) if tiled and ctx.needs_input_grad[0] else None
        )
        out = np.empty(windows[0].shape, xp.dtype)
        spare = None if first is None else np.empty_like(out)

        def pool(samples):
            for s in cache_blocks(samples, xp):
                noted = () if first is None else (spare[s], first[s])
                _max_of_windows([window[s] for window in windows], out[s], *noted)

        parallel.for_samples(pool, len(out), xp.size)
        ctx.save_for_backward(*((first, out) if tiled else (xp, out)))  # out: the next op's input, kept anyway
        ctx.geometry = (pool_size, strides, pads, outs)
        ctx.padded_shape = xp.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        pool_size, strides, pads, outs = ctx.geometry
        if tuple(strides) == tuple(pool_size):
            first, _ = ctx.saved
            dxp = np.empty(ctx.padded_shape, dtype=grad.dtype)

            def route(samples):
                for s in cache_blocks(samples, dxp):
                    _route(grad[s], first[s], dxp[s], pool_size, outs)

            parallel.for_samples(route, len(dxp), dxp.size)
            return crop_nhwc(dxp, pads)
        xp, out = ctx.saved
        dxp = np.zeros(xp.shape, dtype=grad.dtype)
        taken = np.zeros(out.shape, dtype=bool)
        for i, j in MaxPool2DOp._offsets(pool_size):
            where = window_slices(i, j, outs, strides)
            first = (xp[where] == out) & ~taken
            taken |= first
            dxp[where] += grad * first
        return crop_nhwc(dxp, pads)

    @classmethod
    def backward_cost(cls, ctx):
        """popnn's ``poolInputGradient`` for max pooling: the gradient copied into the pooled output's layout
        ("Do an explicit copy of the gradients to match the pooled forward tensor", poplibs
        lib/popnn/Pooling.cpp@7eac0f2, lines 975-980), then one pass over the windows, which reads the forward's
        input in the plan's layout again (``poolingBwd`` takes ``in`` and ``pooled``): its input and its output's
        gradient gathered."""
        inputs, outputs = cls._sizes(ctx)
        return cls._window_pass(ctx, gathered=inputs + outputs)

    @classmethod
    def backward_through(cls, ctx, grad, producer):
        """Through an op that ends in ReLU (``Function.ends_in_relu``: a Conv2D with ReLU), for windows that tile the
        input: ReLU's gradient, ``grad * (y > 0)``, is that of the routing with the windows whose maximum is not
        positive routing nothing (a window's gradient goes to its first maximum, where ``y > 0`` is its maximum's
        ``> 0``; every other value gets ``grad * 0`` either way, the same signed zero or NaN). So the producer's
        gradient before ReLU is routed in one pass, a block of samples at a time, without a pass of ReLU's own over
        the whole: the same bits. None (the tape runs the two backwards) otherwise."""
        pool_size, strides, pads, outs = ctx.geometry
        if not producer.function.ends_in_relu or tuple(strides) != tuple(pool_size):
            return None
        first, out = ctx.saved
        routed = np.empty(ctx.padded_shape, grad.dtype)
        routes_nothing = len(MaxPool2DOp._offsets(pool_size))  # the note of a window with NaN: no offset

        def route_where_positive(samples):
            for s in cache_blocks(samples, routed):
                not_positive = _numbered(np.less_equal(out[s], 0), routes_nothing, first.dtype)  # NaN: routes nothing
                _route(grad[s], np.maximum(first[s], not_positive, out=not_positive), routed[s], pool_size, outs)

        parallel.for_samples(route_where_positive, len(routed), routed.size)
        return producer.function.backward_before_relu(producer.ctx, crop_nhwc(routed, pads))


def _route(grad, first, dxp, pool_size, outs):
    """``dxp`` (padded NHWC) = each window's gradient ``grad`` at the offset ``first`` notes for it (windows that tile
    the input), zero elsewhere."""
    (ph, pw), (ho, wo) = pool_size, outs
    dxp[:, ho * ph :] = 0  # the rows and columns no window covers (11 = 2 * 5 + 1): only they are zeroed
    dxp[:, : ho * ph, wo * pw :] = 0
    for index, (i, j) in enumerate(MaxPool2DOp._offsets(pool_size)):
        np.multiply(grad, first == index, out=dxp[window_slices(i, j, outs, pool_size)])


def _max_of_windows(windows, out, spare=None, first=None):
    """``out`` = the maximum of ``windows`` (views of the same shape); given ``first`` (zeros) and ``spare`` (room of
    ``out``'s shape), ``first`` notes which window holds each first maximum (``MaxPool2D``). The maxima so far go back
    and forth between ``out`` and ``spare``, starting where the last lands in ``out``."""
    if first is None:
        np.copyto(out, windows[0])
        for window in windows[1:]:
            np.maximum(out, window, out=out)
        return
    previous, current = (spare, out) if len(windows) % 2 else (out, spare)
    np.copyto(current, windows[0])
    for index, window in enumerate(windows[1:], 1):
        previous, current = current, previous
        np.maximum(previous, window, out=current)  # changed (!=) where the window is greater: one strided read
        np.maximum(first, _numbered(np.not_equal(current, previous), index, first.dtype), out=first)
    np.maximum(first, _numbered(np.isnan(current), len(windows), first.dtype), out=first)


def _numbered(mask, number, dtype):
    """``mask * number`` in the unsigned ``dtype``; for bytes in place of the mask (numpy's casting loop from bool
    would take three times as long)."""
    if dtype != np.uint8:
        return np.multiply(mask, number, dtype=dtype)
    numbered = mask.view(np.uint8)
    numbered *= number
    return numbered


class AvgPool2DOp(_Pool):
    """With 'same' padding the average is over the real (unpadded) values only, as TensorFlow does."""

    @classmethod
    def backward_cost(cls, ctx):
        """popnn's ``poolingBwd`` for an average: one pass over the windows, reading the output's gradient in the
        plan's layout (poplibs lib/popnn/Pooling.cpp@7eac0f2, poolInputGradientImpl): the gradient gathered."""
        return cls._window_pass(ctx, gathered=cls._sizes(ctx)[1])

    @staticmethod
    def forward(ctx, x, pool_size=(2, 2), strides=None, padding="valid"):
        strides = strides or pool_size
        pads, outs = window_geometry(x.shape, pool_size, strides, padding)
        xp = pad_nhwc(x, pads)
        ones = pad_nhwc(np.ones((1,) + x.shape[1:3] + (1,), dtype=x.dtype), pads)
        total, count = 0, 0
        for i, j in AvgPool2DOp._offsets(pool_size):
            where = window_slices(i, j, outs, strides)
            total = total + xp[where]
            count = count + ones[where]
        ctx.geometry = (pool_size, strides, pads, outs)
        ctx.padded_shape, ctx.count = xp.shape, count
        return (total / count).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        pool_size, strides, pads, outs = ctx.geometry
        share = grad / ctx.count
        dxp = np.zeros(ctx.padded_shape, dtype=grad.dtype)
        for i, j in AvgPool2DOp._offsets(pool_size):
            dxp[window_slices(i, j, outs, strides)] += share
        return crop_nhwc(dxp, pads)
