"""Max and average pooling over NHWC windows, one vectorised pass per window offset."""

import numpy as np

from ..cost import OpCost
from ..function import Function
from .conv import crop_nhwc, pad_nhwc, window_geometry, window_slices


class _Pool(Function):
    @classmethod
    def cost(cls, ctx):
        (xs,), out = ctx.input_shapes, ctx.output_shape
        outputs = int(np.prod(out))
        window = ctx.geometry[0][0] * ctx.geometry[0][1]
        return OpCost(outputs * window, int(np.prod(xs)) * ctx.itemsize, outputs * ctx.itemsize, outputs)

    @staticmethod
    def _offsets(pool):
        return [(i, j) for i in range(pool[0]) for j in range(pool[1])]


class MaxPool2D(_Pool):
    """Backward routes each window's gradient to its *first* maximum (row-major), as TensorFlow does;
    MNIST's flat backgrounds make ties common, and splitting among ties would differ from Keras."""

    @staticmethod
    def forward(ctx, x, pool_size=(2, 2), strides=None, padding="valid"):
        strides = strides or pool_size
        pads, outs = window_geometry(x.shape, pool_size, strides, padding)
        xp = pad_nhwc(x, pads, value=-np.inf)
        out = None
        for i, j in MaxPool2D._offsets(pool_size):
            window = xp[window_slices(i, j, outs, strides)]
            out = window.copy() if out is None else np.maximum(out, window, out=out)
        ctx.save_for_backward(xp, out)
        ctx.geometry = (pool_size, strides, pads, outs)
        return out

    @staticmethod
    def backward(ctx, grad):
        xp, out = ctx.saved
        pool_size, strides, pads, outs = ctx.geometry
        if tuple(strides) == tuple(pool_size):
            dxp = MaxPool2D._route_tiled(xp, out, grad, pool_size, outs)
        else:
            dxp = np.zeros(xp.shape, dtype=grad.dtype)
            taken = np.zeros(out.shape, dtype=bool)
            for i, j in MaxPool2D._offsets(pool_size):
                where = window_slices(i, j, outs, strides)
                first = (xp[where] == out) & ~taken
                taken |= first
                dxp[where] += grad * first
        return crop_nhwc(dxp, pads)

    @staticmethod
    def _route_tiled(xp, out, grad, pool_size, outs):
        """Windows that tile the input (the usual case): compare all of them in one broadcast."""
        (ph, pw), (ho, wo) = pool_size, outs
        n, c = xp.shape[0], xp.shape[3]
        covered = xp[:, : ho * ph, : wo * pw, :]
        is_max = covered.reshape(n, ho, ph, wo, pw, c) == out[:, :, None, :, None, :]
        seen = is_max[:, :, 0, :, 0, :].copy()
        for i, j in MaxPool2D._offsets(pool_size)[1:]:
            here = is_max[:, :, i, :, j, :]
            first = here & ~seen
            seen |= here
            is_max[:, :, i, :, j, :] = first
        routed = (grad[:, :, None, :, None, :] * is_max).reshape(covered.shape)
        if routed.shape == xp.shape:
            return routed
        dxp = np.zeros(xp.shape, dtype=grad.dtype)
        dxp[:, : ho * ph, : wo * pw, :] = routed
        return dxp


class AvgPool2D(_Pool):
    """With 'same' padding the average is over the real (unpadded) values only, as TensorFlow does."""

    @staticmethod
    def forward(ctx, x, pool_size=(2, 2), strides=None, padding="valid"):
        strides = strides or pool_size
        pads, outs = window_geometry(x.shape, pool_size, strides, padding)
        xp = pad_nhwc(x, pads)
        ones = pad_nhwc(np.ones((1,) + x.shape[1:3] + (1,), dtype=x.dtype), pads)
        total, count = 0, 0
        for i, j in AvgPool2D._offsets(pool_size):
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
        for i, j in AvgPool2D._offsets(pool_size):
            dxp[window_slices(i, j, outs, strides)] += share
        return crop_nhwc(dxp, pads)
