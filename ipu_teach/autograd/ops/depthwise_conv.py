"""Depthwise 2-D convolution (``keras.layers.DepthwiseConv2D``, the first half of SeparableConv2D): each
input channel convolved with its own ``depth_multiplier`` kernels, NHWC, kernel (rows, cols, channels,
multiplier) as Keras; output channel ``c * multiplier + m`` is channel c's kernel m (TensorFlow's order).

The windows come from the convolution's ``im2col`` and go back through its ``col2im``. On the IPU Poplar
lowers it to a grouped convolution with one input channel per group, which the matrix units cannot
fill: the op states its multiply-adds as vector-unit work (one per kernel tap and output value).
"""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like
from .conv import check_channels, col2im, fitted_geometry, im2col


class DepthwiseConv2DOp(Function):
    @staticmethod
    def forward(ctx, x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
        kh, kw, channels, multiplier = kernel.shape
        check_channels("DepthwiseConv2D", x.shape, channels)
        cols, ctx.geometry = im2col(x, (kh, kw), strides, padding, dilation, "DepthwiseConv2D", any_layout=False)
        ctx.save_for_backward(cols, kernel)
        y = np.einsum("nhwijc,ijcm->nhwcm", cols, kernel.astype(cols.dtype, copy=False), optimize=True)
        return y.reshape(y.shape[:3] + (channels * multiplier,)).astype(x.dtype, copy=False)

    @classmethod
    def infer(cls, ctx, x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
        kh, kw, channels, multiplier = kernel.shape
        check_channels("DepthwiseConv2D", x.shape, channels)
        _, outs = fitted_geometry(x.shape, (kh, kw), strides, padding, dilation, "DepthwiseConv2D")
        return like(x, (x.shape[0], *outs, channels * multiplier))

    @staticmethod
    def backward(ctx, grad):
        cols, kernel = ctx.saved
        g = grad.reshape(grad.shape[:3] + kernel.shape[2:]).astype(cols.dtype, copy=False)
        gx = gk = None
        if ctx.needs_input_grad[0]:
            dcols = np.einsum("nhwcm,ijcm->nhwijc", g, kernel.astype(cols.dtype, copy=False), optimize=True)
            gx = col2im(dcols, ctx.geometry, grad.dtype)
        if ctx.needs_input_grad[1]:
            gk = np.einsum("nhwijc,nhwcm->ijcm", cols, g, optimize=True).astype(grad.dtype, copy=False)
        return gx, gk

    @classmethod
    def cost(cls, ctx):
        """A multiply-add per kernel tap and output value on the vector units."""
        xs, ks = ctx.input_shapes
        taps, outputs = ks[0] * ks[1], int(np.prod(ctx.output_shape))
        bytes_in = (int(np.prod(xs)) + int(np.prod(ks))) * ctx.itemsize
        return OpCost(
            2 * taps * outputs, bytes_in, outputs * ctx.itemsize, outputs, (), elementwise("scaled_add", taps * outputs)
        )

    @classmethod
    def backward_cost(cls, ctx):
        """The input gradient (a multiply-add per tap and output value) and the kernel gradient (the same
        products, reduced over the batch and positions to one value per kernel entry)."""
        xs, ks = ctx.input_shapes
        taps, outputs = ks[0] * ks[1], int(np.prod(ctx.output_shape))
        vector = elementwise("scaled_add", taps * outputs) if ctx.needs_input_grad[0] else ()
        if ctx.needs_input_grad[1]:
            vector += elementwise("add", taps * outputs) + reduction(taps * outputs, int(np.prod(ks)))
        flops = 2 * taps * outputs * sum(ctx.needs_input_grad)
        return OpCost(
            flops, (int(np.prod(xs)) + outputs) * ctx.itemsize, int(np.prod(xs)) * ctx.itemsize, outputs, (), vector
        )
