"""2-D convolution (NHWC, kernels HWIO, as Keras) by im2col: one big matrix multiply.

The patches are gathered in one copy from a strided view of every window (no Python loop over the
kernel's offsets), which lays them out contiguously for BLAS to do the arithmetic.
"""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...integers import ceil_div
from ..cost import MatrixProduct, OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like
from . import parallel, portable
from .gemm import matmul


def same_padding(size: int, kernel: int, stride: int) -> tuple:
    """TensorFlow's 'same' padding: output ceil(size / stride), extra padding at the end."""
    out = ceil_div(size, stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def dilated(kernel, dilation) -> tuple:
    """The extent of a kernel whose taps are ``dilation`` apart: ``(k - 1) * d + 1`` per axis (Keras'
    ``conv_utils.conv_output_length``)."""
    return tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))


def window_geometry(shape, kernel, strides, padding, dilation=(1, 1)):
    """Padding per side and output size of a sliding window over axes 1 and 2 of NHWC."""
    if padding not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    pads, outs = [], []
    for size, k, s in zip(shape[1:3], dilated(kernel, dilation), strides):
        p = same_padding(size, k, s) if padding == "same" else (0, 0)
        pads.append(p)
        outs.append((size + p[0] + p[1] - k) // s + 1)
    return pads, outs


def window_slices(offset_h, offset_w, outs, strides, dilation=(1, 1)):
    """The strided view that a kernel offset (i, j) sees, for every output position."""
    (ho, wo), (sh, sw) = outs, strides
    top, left = offset_h * dilation[0], offset_w * dilation[1]
    return (
        slice(None),
        slice(top, top + sh * (ho - 1) + 1, sh),
        slice(left, left + sw * (wo - 1) + 1, sw),
        slice(None),
    )


def windows(x, window, strides, outs, dilation=(1, 1)):
    """Every window of NHWC ``x`` as a view of shape (n, out_h, out_w, window_h, window_w, c), no copy:
    ``windows(...)[:, :, :, i, j, :]`` is ``x[window_slices(i, j, outs, strides, dilation)]``."""
    (sh, sw), (ho, wo), (dh, dw) = strides, outs, dilation
    view = sliding_window_view(x, dilated(window, dilation), axis=(1, 2))
    view = view[:, : sh * (ho - 1) + 1 : sh, : sw * (wo - 1) + 1 : sw, :, ::dh, ::dw]
    return view.transpose(0, 1, 2, 4, 5, 3)


def empty_patches(shape, dtype, offset_major=False):
    """Room for the patches (n, out_h, out_w, window_h, window_w, c) of ``windows``, row by row, or, if
    ``offset_major`` and there are few channels (a window row, kernel width x channels, shorter than an output
    row), kernel offset by kernel offset: the patch matrix's transpose is contiguous, so the copy runs along output
    rows in both arrays instead of a window row's few values at a time (3.5x faster for the tutorial's first layer
    with portable numerics)."""
    n, out_h, out_w, window_h, window_w, c = shape
    if not offset_major or window_w * c >= out_w:
        return np.empty(shape, dtype)
    return np.empty((window_h, window_w, c, n, out_h, out_w), dtype).transpose(3, 4, 5, 0, 1, 2)


def copy_windows(cols, view):
    """``cols[...] = view`` for a ``windows`` view, in one copy, or, for few channels, no cast and patches laid out
    row by row, one copy per kernel offset: then numpy's runs of contiguous values are an output row (its width)
    instead of a window's row (kernel width x channels), and its overhead per run outweighs short runs."""
    kh, kw, c = view.shape[3:]
    if kw * c >= view.shape[2] or cols.dtype != view.dtype or not cols.flags.c_contiguous:
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


def fitted_geometry(shape, window, strides, padding, dilation=(1, 1), op="Conv2D"):
    """``window_geometry`` of a kernel that must fit the input: one that does not is an error naming ``op``."""
    pads, outs = window_geometry(shape, window, strides, padding, dilation)
    if outs[0] < 1 or outs[1] < 1:
        raise ValueError(
            f"{op}: a {window[0]}x{window[1]} kernel does not fit an input of {shape[1]}x{shape[2]} "
            f"with padding {padding!r}; use padding='same' or a smaller kernel"
        )
    return pads, outs


def check_channels(op, x_shape, expected) -> None:
    if expected != x_shape[3]:
        raise ValueError(f"{op}: input has {x_shape[3]} channels but the kernel expects {expected}")


def im2col(x, window, strides, padding, dilation=(1, 1), op="Conv2D", any_layout=True):
    """Every window of NHWC ``x`` as one row of a matrix (the rows: output positions; the columns: kernel
    positions x channels), in the compute type, and the geometry ``col2im`` needs to go back. A kernel
    that does not fit is an error naming ``op``. ``any_layout``: the patches only feed matrix products, so when
    they are cast to float64 (portable numerics) they may be laid out as ``empty_patches`` finds fastest. BLAS
    multiplies a transposed operand with other kernels for some shapes: in float64 that changes last bits which the
    rounding to float32 hides; in float32 it would change results, so there the patches stay row by row."""
    n, c = x.shape[0], x.shape[3]
    pads, outs = fitted_geometry(x.shape, window, strides, padding, dilation, op)
    xp = pad_nhwc(x, pads)
    wide = portable.compute_type(x.dtype)
    cols = empty_patches((n, outs[0], outs[1]) + tuple(window) + (c,), wide, any_layout and wide != x.dtype)
    view = windows(xp, window, strides, outs, dilation)
    parallel.for_samples(lambda s: copy_windows(cols[s], view[s]), n, cols.size)  # the one cast to the compute type
    return cols, (xp.shape, pads, outs, strides, dilation)


def col2im(dcols, geometry, dtype):
    """The sum of every window's values ``dcols`` (n, out_h, out_w, window_h, window_w, c) back at the
    positions of the input they were taken from: the transpose of ``im2col``."""
    padded_shape, pads, outs, strides, dilation = geometry
    dxp = np.zeros(padded_shape, dtype=dtype)
    scatter_windows(dxp, dcols, strides, dilation)  # not split by samples: see ``parallel``
    return crop_nhwc(dxp, pads)


CALL_COST = 100  # a numpy call's overhead, in runs of a few dozen values (its inner loops): about 3 us


def scatter_windows(dxp, dcols, strides, dilation=(1, 1)):
    """``dxp`` (padded NHWC) += the patch gradients ``dcols`` (n, out_h, out_w, window_h, window_w, c) at the windows
    they came from, each value of ``dxp`` summing its terms in kernel-offset order (row-major), as Keras' gradient
    rounds them.

    One call per kernel offset reads runs of one pixel's channels (``dcols``' positions are a window apart).
    Where a window's columns are adjacent (no dilation across), one call per kernel row and output column instead
    reads a window row, kernel width x channels, at a time (a run of ``dcols`` and of ``dxp`` alike): as many calls
    times the kernel's width fewer runs, each that much longer. Its output columns go right to left, so each value
    of ``dxp`` still gets its kernel columns left to right (the column of a window further left is further right
    in it): the same sums in the same order, the same bits. Chosen by the count of calls and runs (the tutorial's
    second layer: 33 calls of 704 runs instead of 9 of 7,744, a fifth less time)."""
    n, outs, (kh, kw) = dcols.shape[0], dcols.shape[1:3], dcols.shape[3:5]
    per_offset = kh * kw * (CALL_COST + n * outs[0] * outs[1])
    per_window_row = kh * outs[1] * (CALL_COST + n * outs[0])
    if dilation[1] == 1 and per_window_row < per_offset:
        (sh, sw), top = strides, (outs[0] - 1) * strides[0] + 1
        for i in range(kh):
            for column in reversed(range(outs[1])):
                target = dxp[:, i * dilation[0] : i * dilation[0] + top : sh, column * sw : column * sw + kw, :]
                target += dcols[:, :, column, i, :, :]
        return
    for i in range(kh):
        for j in range(kw):
            dxp[window_slices(i, j, outs, strides, dilation)] += dcols[:, :, :, i, j, :]


def convolve(ctx, x, kernel, bias, strides, padding, dilation, relu=False):
    """Conv2D's forward, noting on ``ctx`` what its backward needs; with ``relu``, ReLU applied to each piece of the
    product as it is finished, in cache, and where the output is positive noted as ``ctx.relu_mask``
    (``fused.Conv2DReLUOp``)."""
    kh, kw, kc, filters = kernel.shape
    check_channels("Conv2D", x.shape, kc)
    cols, ctx.geometry = im2col(x, (kh, kw), strides, padding, dilation)
    outs = cols.shape[1:3]
    cols = cols.reshape(-1, kh * kw * kc)
    w2 = kernel.reshape(kh * kw * kc, filters)
    ctx.relu_mask = np.empty((cols.shape[0], filters), bool) if relu else None
    y = matmul(cols, w2, "conv", dtype=x.dtype, bias=bias, relu_mask=ctx.relu_mask)
    ctx.save_for_backward(cols, w2)
    ctx.kernel_shape = kernel.shape
    return y.reshape((x.shape[0],) + outs + (filters,))


class Conv2DOp(Function):
    @staticmethod
    def forward(ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        return convolve(ctx, x, kernel, bias, strides, padding, dilation)

    @classmethod
    def infer(cls, ctx, x, kernel, bias, strides=(1, 1), padding="valid", dilation=(1, 1)):
        check_channels("Conv2D", x.shape, kernel.shape[2])
        _, outs = fitted_geometry(x.shape, kernel.shape[:2], strides, padding, dilation)
        return like(x, (x.shape[0], *outs, kernel.shape[3]))

    @staticmethod
    def backward(ctx, grad):
        cols, w2 = ctx.saved
        kshape = ctx.kernel_shape
        g2 = grad.reshape(-1, grad.shape[-1])
        gx = gk = gb = None
        if ctx.needs_input_grad[1]:
            gk = matmul(cols.T, g2, "conv", dtype=grad.dtype).reshape(kshape)
        if ctx.needs_input_grad[2]:
            gb = np.einsum("ij->j", g2)  # column sums; twice as fast as sum(axis=0) on tall arrays
        if ctx.needs_input_grad[0]:
            dcols = matmul(g2, w2.T, "conv").reshape(grad.shape[:3] + kshape[:3])
            gx = col2im(dcols, ctx.geometry, grad.dtype)
        return gx, gk, gb

    @classmethod
    def cost(cls, ctx):
        """One product on the matrix units (rows: output positions, depth: kernel positions x input
        channels, cols: filters) and the bias add on the vector units."""
        xs, ks, bs = ctx.input_shapes
        outputs = int(np.prod(ctx.output_shape))
        kh, kw, channels, filters = ks
        product = MatrixProduct(
            outputs // filters,
            kh * kw * channels,
            filters,
            channels,
            "conv",
            kh * kw,
            left_laid_out=ctx.laid_out_inputs[0],
            right_laid_out=ctx.laid_out_inputs[1],
        )
        bytes_in = (int(np.prod(xs)) + int(np.prod(ks)) + int(np.prod(bs))) * ctx.itemsize
        bias_add = elementwise("add", outputs, filters, bias=True)  # poplin's addBias: an AddToChannel compute set
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
        if ctx.needs_input_grad[1]:  # the input's windows transposed (positions as the depth) by the output gradient
            products.append(
                MatrixProduct(kh * kw * channels, positions, filters, positions, "conv", kh * kw, left_transposed=True)
            )
        if ctx.needs_input_grad[0]:  # the output gradient's windows by the kernel flipped and transposed
            products.append(
                MatrixProduct(
                    int(np.prod(xs)) // channels,
                    kh * kw * filters,
                    channels,
                    filters,
                    "conv",
                    kh * kw,
                    right_transposed=True,
                )
            )
        bias_flops = outputs if ctx.needs_input_grad[2] else 0
        return OpCost(
            sum(p.flops for p in products) + bias_flops,
            (int(np.prod(xs)) + outputs) * ctx.itemsize,
            (int(np.prod(xs)) + int(np.prod(ks))) * ctx.itemsize,
            outputs,
            tuple(products),
            reduction(outputs, filters) if ctx.needs_input_grad[2] else (),
        )
