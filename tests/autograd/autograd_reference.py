"""Straightforward loop implementations to hold the vectorised ops to (tiny shapes only).

'same' padding follows TensorFlow's documented rule: the output has ceil(size / stride) positions and
the padding needed for that, max((out - 1) * stride + window - size, 0), goes half before and the
rest (the odd one) after.
"""

import math

import numpy as np


def tf_same_padding(size, window, stride):
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + window - size, 0)
    return total // 2, total - total // 2


def output_size(size, window, stride, padding):
    return math.ceil(size / stride) if padding == "same" else (size - window) // stride + 1


def windows(shape, window, strides, padding):
    """Yield (out_row, out_col, rows, cols): the output position and the real input rows / cols it sees."""
    _, h, w, _ = shape
    (kh, kw), (sh, sw) = window, strides
    top = tf_same_padding(h, kh, sh)[0] if padding == "same" else 0
    left = tf_same_padding(w, kw, sw)[0] if padding == "same" else 0
    for i in range(output_size(h, kh, sh, padding)):
        for j in range(output_size(w, kw, sw, padding)):
            rows = [r for r in range(i * sh - top, i * sh - top + kh) if 0 <= r < h]
            cols = [c for c in range(j * sw - left, j * sw - left + kw) if 0 <= c < w]
            yield i, j, rows, cols


def _empty_output(x, window, strides, padding, channels):
    return np.zeros(
        (
            x.shape[0],
            output_size(x.shape[1], window[0], strides[0], padding),
            output_size(x.shape[2], window[1], strides[1], padding),
            channels,
        )
    )


def conv2d(x, kernel, bias, strides, padding):
    """Direct convolution: each output is bias + the sum over the window of input * weight.

    A window cell outside the input is padding (zero); ``rows`` / ``cols`` list only real cells, and
    the kernel tap for a real cell is its offset from the window's (possibly padded) first cell.
    """
    kh, kw, _, filters = kernel.shape
    y = _empty_output(x, (kh, kw), strides, padding, filters)
    top = tf_same_padding(x.shape[1], kh, strides[0])[0] if padding == "same" else 0
    left = tf_same_padding(x.shape[2], kw, strides[1])[0] if padding == "same" else 0
    for i, j, rows, cols in windows(x.shape, (kh, kw), strides, padding):
        acc = np.tile(bias, (x.shape[0], 1)).astype(np.float64)
        for r in rows:
            for c in cols:
                acc += x[:, r, c, :] @ kernel[r - (i * strides[0] - top), c - (j * strides[1] - left)]
        y[:, i, j, :] = acc
    return y


def pool2d(x, pool_size, strides, padding, kind):
    """Max or mean over the real values of each window."""
    reduce = np.max if kind == "max" else np.mean
    y = _empty_output(x, pool_size, strides, padding, x.shape[3])
    for i, j, rows, cols in windows(x.shape, pool_size, strides, padding):
        y[:, i, j, :] = reduce(x[:, rows][:, :, cols], axis=(1, 2))
    return y


def max_pool_backward(x, grad, pool_size, strides, padding):
    """Each window's gradient goes to its first maximum in row-major order (TensorFlow's choice)."""
    dx = np.zeros(x.shape)
    for i, j, rows, cols in windows(x.shape, pool_size, strides, padding):
        cells = [(r, c) for r in rows for c in cols]
        for sample in range(x.shape[0]):
            for channel in range(x.shape[3]):
                values = [x[sample, r, c, channel] for r, c in cells]
                r, c = cells[int(np.argmax(values))]  # argmax returns the first of equal maxima
                dx[sample, r, c, channel] += grad[sample, i, j, channel]
    return dx
