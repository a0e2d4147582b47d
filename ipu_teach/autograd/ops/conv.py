"""2-D convolution (NHWC, kernels HWIO, as Keras) by im2col: one big matrix multiply.

The patches are gathered in one copy from a strided view of every window (no Python loop over the
kernel's offsets), which lays them out contiguously for BLAS to do the arithmetic.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...integers import ceil_div
from ..cost import MatrixProduct, OpCost, elementwise, reduction
from ..function import Function
from . import portable
from .gemm import matmul


def same_padding(size: int, kernel: int, stride: int) -> tuple:
    """TensorFlow's 'same' padding: output ceil(size / stride), extra padding at the end."""
    out = ceil_div(size, stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def window_geometry(shape, kernel, strides, padding):
    """Padding per side and output size of a sliding window over axes 1 and 2 of NHWC."""
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    pads, outs = [], []
    for size, k, s in zip(shape[1:3], kernel, strides):
        p = same_padding(size, k, s) if padding == "same" else (0, 0)
        pads.append(p)
        outs.append((size + p[0] + p[1] - k) // s + 1)
    return pads, outs


def window_slices(offset_h, offset_w, outs, strides):
    """The strided view that a kernel offset (i, j) sees, for every output position."""
    (ho, wo), (sh, sw) = outs, strides
    return (
        slice(None),
        slice(offset_h, offset_h + sh * (ho - 1) + 1, sh),
        slice(offset_w, offset_w + sw * (wo - 1) + 1, sw),
        slice(None),
    )


def windows(x, window, strides, outs):
    """Every window of NHWC ``x`` as a view of shape (n, out_h, out_w, window_h, window_w, c), no copy:
    ``windows(...)[:, :, :, i, j, :]`` is ``x[window_slices(i, j, outs, strides)]``."""
    (sh, sw), (ho, wo) = strides, outs
    view = sliding_window_view(x, window, axis=(1, 2))[:, : sh * (ho - 1) + 1 : sh, : sw * (wo - 1) + 1 : sw]
    return view.transpose(0, 1, 2, 4, 5, 3)


def copy_windows(cols, view):
    """``cols[...] = view`` for a ``windows`` view, in one copy, or, for few channels and no cast, one copy
    per kernel offset: then numpy's runs of contiguous values are an output row (its width) instead of a
    window's row (kernel width x channels), and its overhead per run outweighs short runs."""
    kh, kw, c = view.shape[3:]
    if kw * c >= view.shape[2] or cols.dtype != view.dtype:
        np.copyto(cols, view)
        return
    for i in range(kh):
        for j in range(kw):
            cols[:, :, :, i, j, :] = view[:, :, :, i, j, :]


def pad_nhwc(x, pads, value=0.0):
    if not any(p for pair in pads for p in pair):
        return x
    return np.pad(x, ((0, 0), pads[0], pads[1], (0, 0)), constant_values=value)


def crop_nhwc(x, pads):
    (top, bottom), (left, right) = pads
    return x[:, top : x.shape[1] - bottom, left : x.shape[2] - right, :]


class Conv2D(Function):
    @staticmethod
    def forward(ctx, x, kernel, bias, strides=(1, 1), padding="valid"):
        n, c = x.shape[0], x.shape[3]
        kh, kw, kc, filters = kernel.shape
        if kc != c:
            raise ValueError(f"Conv2D: input has {c} channels but the kernel expects {kc}")
        pads, outs = window_geometry(x.shape, (kh, kw), strides, padding)
        if outs[0] < 1 or outs[1] < 1:
            raise ValueError(
                f"Conv2D: a {kh}x{kw} kernel does not fit an input of {x.shape[1]}x{x.shape[2]} "
                f"with padding {padding!r}; use padding='same' or a smaller kernel"
            )
        xp = pad_nhwc(x, pads)
        cols = np.empty((n, outs[0], outs[1], kh, kw, c), dtype=portable.compute_type(x.dtype))
        copy_windows(cols, windows(xp, (kh, kw), strides, outs))  # the one cast to the compute type
        cols = cols.reshape(n * outs[0] * outs[1], kh * kw * c)
        w2 = kernel.reshape(kh * kw * c, filters)
        y = matmul(cols, w2, "conv", dtype=x.dtype)
        y += bias
        ctx.save_for_backward(cols, w2)
        ctx.geometry = (xp.shape, pads, outs, strides, kernel.shape)
        return y.reshape(n, outs[0], outs[1], filters)

    @staticmethod
    def backward(ctx, grad):
        cols, w2 = ctx.saved
        padded_shape, pads, outs, strides, kshape = ctx.geometry
        g2 = grad.reshape(-1, grad.shape[-1])
        gx = gk = gb = None
        if ctx.needs_input_grad[1]:
            gk = matmul(cols.T, g2, "conv", dtype=grad.dtype).reshape(kshape)
        if ctx.needs_input_grad[2]:
            gb = np.einsum("ij->j", g2)  # column sums; twice as fast as sum(axis=0) on tall arrays
        if ctx.needs_input_grad[0]:
            kh, kw = kshape[:2]
            dcols = matmul(g2, w2.T, "conv").reshape(grad.shape[:3] + (kh, kw, kshape[2]))
            dxp = np.zeros(padded_shape, dtype=grad.dtype)
            for i in range(kh):
                for j in range(kw):
                    dxp[window_slices(i, j, outs, strides)] += dcols[:, :, :, i, j, :]
            gx = crop_nhwc(dxp, pads)
        return gx, gk, gb

    @classmethod
    def cost(cls, ctx):
        """One product on the matrix units (rows: output positions, depth: kernel positions x input
        channels, cols: filters) and the bias add on the vector units."""
        xs, ks, bs = ctx.input_shapes
        outputs = int(np.prod(ctx.output_shape))
        kh, kw, channels, filters = ks
        product = MatrixProduct(outputs // filters, kh * kw * channels, filters, channels, "conv")
        bytes_in = (int(np.prod(xs)) + int(np.prod(ks)) + int(np.prod(bs))) * ctx.itemsize
        bias_add = elementwise("add", outputs, filters)  # poplin's addBias: an AddToChannel compute set
        return OpCost(product.flops + outputs, bytes_in, outputs * ctx.itemsize, outputs, (product,), bias_add)

    @classmethod
    def backward_cost(cls, ctx):
        """The kernel gradient (a product whose depth is every output position, as Poplar's weight-update
        pass), the input gradient unless this is the first layer (a transposed convolution: filters are its
        input channels) and the bias gradient, a reduction on the vector units."""
        xs, ks, bs = ctx.input_shapes
        outputs = int(np.prod(ctx.output_shape))
        kh, kw, channels, filters = ks
        positions = outputs // filters
        products = []
        if ctx.needs_input_grad[1]:
            products.append(MatrixProduct(kh * kw * channels, positions, filters, positions, "conv"))
        if ctx.needs_input_grad[0]:
            products.append(MatrixProduct(int(np.prod(xs)) // channels, kh * kw * filters, channels, filters, "conv"))
        bias_flops = outputs if ctx.needs_input_grad[2] else 0
        return OpCost(
            sum(p.flops for p in products) + bias_flops,
            (int(np.prod(xs)) + outputs) * ctx.itemsize,
            (int(np.prod(xs)) + int(np.prod(ks))) * ctx.itemsize,
            outputs,
            tuple(products),
            reduction(outputs, filters) if ctx.needs_input_grad[2] else (),
        )
