"""The convolution's patches come from one strided view of every window (``conv.windows``), copied in one go or
one kernel offset at a time (``conv.copy_windows``): both give exactly the per-offset slices they replace."""

import numpy as np
import pytest

from ipu_teach.autograd.ops.conv import copy_windows, scatter_windows, window_geometry, window_slices, windows


@pytest.mark.parametrize(
    "shape, window, strides, target",
    [
        ((2, 28, 28, 1), (3, 3), (1, 1), np.float32),  # the tutorial's first layer: one offset at a time
        ((2, 13, 13, 32), (3, 3), (1, 1), np.float32),  # its second: one copy
        ((2, 28, 28, 1), (3, 3), (1, 1), np.float64),  # cast to portable numerics' float64: one copy
        ((3, 9, 8, 2), (2, 3), (2, 3), np.float32),  # strides that skip rows and columns
        ((1, 5, 7, 4), (5, 1), (1, 2), np.float64),
    ],
)
def test_windows_copy_equals_the_per_offset_slices(shape, window, strides, target):
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    _, outs = window_geometry(shape, window, strides, "valid")
    view = windows(x, window, strides, outs)
    assert view.shape == (shape[0], *outs, *window, shape[3])
    assert np.shares_memory(view, x)  # a view: nothing copied yet
    cols = np.empty(view.shape, target)
    copy_windows(cols, view)
    for i in range(window[0]):
        for j in range(window[1]):
            np.testing.assert_array_equal(cols[:, :, :, i, j, :], x[window_slices(i, j, outs, strides)].astype(target))


@pytest.mark.parametrize(
    "n, outs, window, strides, channels, dilation",
    [
        (64, (11, 11), (3, 3), (1, 1), 32, (1, 1)),  # the tutorial's second layer: one call per kernel row and column
        (4, (5, 4), (3, 2), (2, 1), 3, (1, 1)),  # overlapping rows, adjacent columns
        (3, (4, 6), (2, 3), (1, 2), 5, (1, 1)),  # columns that overlap by one
        (2, (3, 3), (2, 2), (3, 3), 4, (1, 1)),  # strides past the window: no overlap
        (1, (1, 50), (1, 2), (1, 1), 2, (1, 1)),  # one row of one sample: one call per kernel offset
        (8, (6, 6), (3, 3), (1, 1), 4, (2, 1)),  # rows dilated: still a window row at a time
        (8, (6, 6), (3, 3), (1, 1), 4, (1, 2)),  # columns dilated: one call per kernel offset
    ],
)
def test_scattered_patch_gradients_sum_in_kernel_offset_order_bit_for_bit(n, outs, window, strides, channels, dilation):
    """Whichever way ``scatter_windows`` walks, each input value sums its terms kernel offset by kernel offset, as
    the per-offset loop (Keras' order): random float32 terms round differently in any other order."""
    rng = np.random.default_rng(4)
    dcols = rng.normal(size=(n, *outs, *window, channels)).astype(np.float32)
    extent = [(k - 1) * d + 1 for k, d in zip(window, dilation)]
    padded = (n, strides[0] * (outs[0] - 1) + extent[0], strides[1] * (outs[1] - 1) + extent[1], channels)
    expected = np.zeros(padded, np.float32)
    for i in range(window[0]):
        for j in range(window[1]):
            expected[window_slices(i, j, outs, strides, dilation)] += dcols[:, :, :, i, j, :]
    got = np.zeros(padded, np.float32)
    scatter_windows(got, dcols, strides, dilation)
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("portable", [False, True], ids=["float32", "portable"])
@pytest.mark.parametrize("channels", [1, 3, 32])
def test_few_channels_cast_to_float64_are_laid_out_kernel_offset_by_offset(portable, channels):
    """Patches cast for a float64 product (portable numerics) with few channels are stored with their matrix's
    transpose contiguous (one copy along output rows); the matrix is a view of them, equal to the row-by-row one.
    In float32 they stay row by row (BLAS would multiply the transposed layout with other kernels: other bits)."""
    from ipu_teach import autograd
    from ipu_teach.autograd.ops.conv import im2col

    x = np.random.default_rng(5).normal(size=(4, 28, 28, channels)).astype(np.float32)
    was = autograd.portable_numerics()
    try:
        autograd.set_portable_numerics(portable)
        cols, _ = im2col(x, (3, 3), (1, 1), "valid")
        rowwise, _ = im2col(x, (3, 3), (1, 1), "valid", any_layout=False)
    finally:
        autograd.set_portable_numerics(was)
    matrix = cols.reshape(-1, 9 * channels)
    assert np.shares_memory(matrix, cols)  # the product reads the patches themselves
    assert matrix.flags.f_contiguous == (portable and 3 * channels < 26)  # a window row shorter than an output row
    assert rowwise.flags.c_contiguous and cols.dtype == rowwise.dtype == (np.float64 if portable else np.float32)
    np.testing.assert_array_equal(matrix, rowwise.reshape(-1, 9 * channels))
