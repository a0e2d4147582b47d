"""The split matrix product equals one product, whichever way it splits."""

import numpy as np
import pytest

from ipu_teach.autograd.ops import gemm


@pytest.mark.parametrize(
    "m, k, n, way",
    [
        (3, 4, 5, "whole (small)"),
        (1000, 9, 32, "rows"),
        (9, 2000, 32, "sum"),
        (7, 1, 300_000, "rows, one at a time"),
        (600, 300, 200, "whole (large)"),
    ],
)
def test_split_product_equals_the_product(m, k, n, way):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
    np.testing.assert_allclose(gemm.matmul(a, b), a @ b, rtol=1e-10, atol=1e-10)


def test_split_product_takes_transposed_views_and_keeps_float32():
    rng = np.random.default_rng(1)
    cols, grad = rng.normal(size=(3000, 9)).astype(np.float32), rng.normal(size=(3000, 32)).astype(np.float32)
    out = gemm.matmul(cols.T, grad)  # a first conv layer's kernel gradient: split along the sum
    assert out.dtype == np.float32 and out.shape == (9, 32)
    np.testing.assert_allclose(out, cols.T.astype(np.float64) @ grad, rtol=1e-4, atol=1e-3)
