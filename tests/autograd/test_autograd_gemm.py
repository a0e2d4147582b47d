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


@pytest.fixture(params=[False, True], ids=["float32", "portable"])
def numerics(request):
    """Each test runs in float32 and with portable numerics (the tests' default, restored after)."""
    from ipu_teach import autograd

    was = autograd.portable_numerics()
    autograd.set_portable_numerics(request.param)
    yield request.param
    autograd.set_portable_numerics(was)


@pytest.mark.parametrize(
    "m, k, n",
    [
        (3, 4, 5),  # whole (small)
        (43264, 9, 32),  # the tutorial's first convolution: split by rows, the bias added piece by piece
        (9, 2000, 32),  # split along the sum
        (7744, 288, 64),  # its second: whole in float32, rounded a piece of rows at a time with portable numerics
        (5000, 100, 333),  # a width BLAS' edge tiles compute in another order in float64
    ],
)
def test_the_bias_added_by_the_product_has_the_bits_of_a_separate_add(numerics, m, k, n):
    """Keras adds a convolution's bias after the product is rounded to float32: the bias ``matmul`` adds while each
    piece of the product is in cache gives that, bit for bit, and a product summed in float64 gives the float32 bits
    of the whole product rounded once, however it is cut."""
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(m, k)).astype(np.float32), rng.normal(size=(k, n)).astype(np.float32)
    bias = rng.normal(size=n).astype(np.float32)
    if numerics:
        expected = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    else:
        expected = gemm.matmul(a, b)
    expected += bias
    got = gemm.matmul(a.astype(np.float64) if numerics else a, b, "conv", dtype=np.float32, bias=bias)
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()


def test_a_half_precision_product_adds_its_bias_in_half_precision():
    a, b = np.full((4, 8), 0.5, np.float16), np.full((8, 2), 0.25, np.float16)
    got = gemm.matmul(a, b, "conv", bias=np.array([1, -1], np.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [[2, 0]] * 4)
