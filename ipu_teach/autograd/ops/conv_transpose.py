"""2-D transposed convolution (``keras.layers.Conv2DTranspose``; NHWC, kernels (rows, cols, filters,
input channels) as Keras): the input gradient of a convolution, taken as a forward op.

Each input position times the kernel gives a window of the output (one matrix product), and the
windows are summed into place (``col2im``, the convolution's own input-gradient path). Its input
gradient is then a plain convolution of the output gradient (``im2col``). TensorFlow computes it the
same way (``conv2d_transpose`` is ``Conv2DBackpropInput``).
"""

import numpy as np

from ..cost import MatrixProduct, OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like, result_dtype
from .conv import check_channels, col2im, im2col, window_geometry
from .gemm import matmul


def transposed_output_length(size, kernel, stride, padding, dilation=1):
    """Keras' ``conv_utils.deconv_output_length`` (no ``output_padding``): the length whose convolution
    by the same kernel, stride and padding has ``size`` positions. None for an unknown size."""
    if size is None:
        return None
    extent = (kernel - 1) * dilation + 1
    return size * stride if padding == "same" else size * stride + max(extent - stride, 0)


def _output_size(x_shape, kernel_shape, strides, padding, dilation) -> list:
    """The output's rows and columns for an NHWC input of ``x_shape``."""
    return [
        transposed_output_length(d, k, s, padding, r)
        for d, k, s, r in zip(x_shape[1:3], kernel_shape[:2], strides, dilation)
    ]


class Conv2DTransposeOp(Function):
    @staticmethod
    def forward(ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        n, h, w, channels = x.shape
        kh, kw, filters, kc = kernel.shape
        check_channels("Conv2DTranspose", x.shape, kc)
        out = _output_size(x.shape, kernel.shape, strides, padding, dilation)
        pads, outs = window_geometry((n, *out, filters), (kh, kw), strides, padding, dilation)
        padded = (n, out[0] + sum(pads[0]), out[1] + sum(pads[1]), filters)
        x2 = x.reshape(-1, channels)
        w2 = kernel.reshape(kh * kw * filters, channels)
        windows = matmul(x2, w2.T, "conv").reshape(n, h, w, kh, kw, filters)
        ctx.geometry = (padded, pads, outs, strides, dilation)
        ctx.save_for_backward(x2, w2)
        ctx.kernel_shape, ctx.padding = kernel.shape, padding
        y = col2im(windows, ctx.geometry, x.dtype)
        return y + bias

    @classmethod
    def infer(cls, ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        check_channels("Conv2DTranspose", x.shape, kernel.shape[3])
        out = _output_size(x.shape, kernel.shape, strides, padding, dilation)
        return like(x, (x.shape[0], *out, kernel.shape[2]), result_dtype(x, bias))

    @staticmethod
    def backward(ctx, grad):
        x2, w2 = ctx.saved
        _, _, _, strides, dilation = ctx.geometry
        cols, _ = im2col(grad, ctx.kernel_shape[:2], strides, ctx.padding, dilation)
        cols = cols.reshape(-1, w2.shape[0])
        gx = (
            matmul(cols, w2, "conv", dtype=grad.dtype).reshape(ctx.input_shapes[0]) if ctx.needs_input_grad[0] else None
        )
        gk = matmul(cols.T, x2, "conv", dtype=grad.dtype).reshape(ctx.kernel_shape) if ctx.needs_input_grad[1] else None
        gb = np.einsum("nhwc->c", grad) if ctx.needs_input_grad[2] else None
        return gx, gk, gb

    @classmethod
    def cost(cls, ctx):
        """One product on the matrix units (rows: input positions, depth: input channels, cols: kernel
        positions x filters), then the windows summed into the output and the bias added (vector units)."""
        xs, ks, _ = ctx.input_shapes
        kh, kw, filters, channels = ks
        positions = int(np.prod(xs)) // channels
        product = MatrixProduct(
            positions,
            channels,
            kh * kw * filters,
            channels,
            "conv",
            left_laid_out=ctx.laid_out_inputs[0],
            right_laid_out=ctx.laid_out_inputs[1],
        )
        windows, outputs = positions * kh * kw * filters, int(np.prod(ctx.output_shape))
        vector = elementwise("add", windows) + elementwise("add", outputs, filters)
        bytes_in = (int(np.prod(xs)) + int(np.prod(ks)) + filters) * ctx.itemsize
        return OpCost(product.flops + windows + outputs, bytes_in, outputs * ctx.itemsize, outputs, (product,), vector)

    @classmethod
    def backward_cost(cls, ctx):
        """The input gradient (a convolution of the output gradient: depth kernel positions x filters), the
        kernel gradient (depth: every input position) and the bias gradient, a reduction."""
        xs, ks, _ = ctx.input_shapes
        kh, kw, filters, channels = ks
        positions, outputs = int(np.prod(xs)) // channels, int(np.prod(ctx.output_shape))
        products = []
        if ctx.needs_input_grad[0]:
            products.append(MatrixProduct(positions, kh * kw * filters, channels, filters, "conv", kh * kw))
        if ctx.needs_input_grad[1]:
            products.append(
                MatrixProduct(kh * kw * filters, positions, channels, positions, "conv", kh * kw, left_transposed=True)
            )
        vector = reduction(outputs, filters) if ctx.needs_input_grad[2] else ()
        flops = sum(p.flops for p in products) + (outputs if ctx.needs_input_grad[2] else 0)
        return OpCost(
            flops,
            (int(np.prod(xs)) + outputs) * ctx.itemsize,
            (int(np.prod(xs)) + int(np.prod(ks))) * ctx.itemsize,
            outputs,
            tuple(products),
            vector,
        )
