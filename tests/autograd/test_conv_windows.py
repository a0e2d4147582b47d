"""The convolution's patches come from one strided view of every window (``conv.windows``), copied in one go or
one kernel offset at a time (``conv.copy_windows``): both give exactly the per-offset slices they replace."""

import numpy as np
import pytest

from ipu_teach.autograd.ops.conv import copy_windows, window_geometry, window_slices, windows


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
