"""Fused ops (``ops.fused``): the same bits as the ops they fuse, applied one by one, and the same records for the
simulated IPU, in every numerics the engine has (float32, float64 for the gradient checks, float16, portable)."""

import dataclasses

import numpy as np
import pytest

from ipu_teach import autograd
from ipu_teach.autograd import Tensor, no_grad, ops, record
from ipu_teach.autograd.ops import gemm
from ipu_teach.autograd.symbolic import ShapedArray

GEOMETRIES = [
    ((8, 28, 28, 1), (3, 3, 1, 32), {}),  # the tutorial's first layer: its product is split by rows
    ((16, 13, 13, 32), (3, 3, 32, 64), {}),  # its second: one product, given bias and ReLU a block at a time
    ((5, 9, 9, 3), (2, 2, 3, 4), {"strides": (2, 2), "padding": "same"}),  # a small product, not split
]


def _apply(fused, arrays, grad, params, requires_grad=True):
    """The output, the three gradients and the records of ReLU(Conv2D(...)) applied one way or the other."""
    tensors = [Tensor(a.copy(), requires_grad=requires_grad) for a in arrays]
    with record() as tape:
        y = (
            ops.Conv2DReLUOp.apply(*tensors, **params)
            if fused
            else ops.ReLUOp.apply(ops.Conv2DOp.apply(*tensors, **params))
        )
    if requires_grad:
        y.backward(grad)
    return [y.array] + [t.grad for t in tensors], [repr(dataclasses.asdict(r)) for r in tape]


@pytest.fixture(params=[False, True], ids=["float32 sums", "portable"])
def portable(request):
    was = autograd.portable_numerics()  # on in the tests (conftest.py)
    autograd.set_portable_numerics(request.param)
    yield request.param
    autograd.set_portable_numerics(was)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("x_shape, k_shape, params", GEOMETRIES)
def test_conv2d_relu_gives_the_bits_and_records_of_conv2d_then_relu(portable, dtype, x_shape, k_shape, params):
    rng = np.random.default_rng(3)
    arrays = [rng.normal(size=x_shape), 0.3 * rng.normal(size=k_shape), 0.1 * rng.normal(size=k_shape[3])]
    arrays = [a.astype(dtype) for a in arrays]
    arrays[0][0, :2] = -0.0  # a zero's sign counts too
    out_shape = ops.Conv2DOp.apply(*arrays, **params).shape
    grad = rng.normal(size=out_shape).astype(dtype)
    (separate, separate_tape), (fused, fused_tape) = (_apply(f, arrays, grad, params) for f in (False, True))
    for one, other in zip(separate, fused):
        assert one.dtype == other.dtype and one.tobytes() == other.tobytes()
    assert fused_tape == separate_tape and "'op': 'ReLU'" in fused_tape[1]
    assert (fused[0] == 0).any() and (fused[0] > 0).any()  # ReLU cut some values and passed others


def test_conv2d_relu_records_as_the_two_ops_without_gradients_and_from_shapes_alone():
    x, kernel, bias = np.ones((2, 6, 6, 3), np.float32), np.ones((3, 3, 3, 4), np.float32), np.zeros(4, np.float32)
    with no_grad():
        _, separate = _apply(False, [x, kernel, bias], None, {}, requires_grad=False)
        _, fused = _apply(True, [x, kernel, bias], None, {}, requires_grad=False)
    assert fused == separate
    shaped = [ShapedArray(a.shape, a.dtype) for a in (x, kernel, bias)]
    with record() as tape:
        out = ops.Conv2DReLUOp.apply(*shaped)
    assert out.shape == (2, 4, 4, 4) and [r.op for r in tape] == ["Conv2D", "ReLU"]
    with record() as real:
        ops.Conv2DReLUOp.apply(x, kernel, bias)
    assert [dataclasses.asdict(r) for r in tape] == [dataclasses.asdict(r) for r in real]


def test_the_product_applies_relu_and_notes_its_mask_piece_by_piece():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3000, 9)).astype(np.float32), rng.normal(size=(9, 32)).astype(np.float32)
    bias = rng.normal(size=32).astype(np.float32)
    mask = np.zeros((3000, 32), bool)
    y = gemm.matmul(a, b, bias=bias, relu_mask=mask)
    expected = gemm.matmul(a, b, bias=bias)
    np.maximum(expected, 0, out=expected)
    assert y.tobytes() == expected.tobytes()
    assert np.array_equal(mask, expected > 0) and 0 < mask.sum() < mask.size


@pytest.mark.parametrize("bias_dtype", [np.float32, np.float64, None])
def test_the_products_bias_and_relu_have_the_bits_of_numpys_broadcast_ops_for_any_value(bias_dtype):
    """``gemm`` adds the bias and applies ReLU through a bias tiled to a block and a block of zeros (faster than
    broadcasting a row or a scalar): the same bits as ``out += bias`` and ``np.maximum(out, 0)``, a zero's sign, NaN,
    infinities and a bias of a wider type (summed in it, then rounded) included, over several blocks and a rest."""
    rng = np.random.default_rng(3)
    edge = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.0, -3.0], np.float32)
    columns = 48
    rows = 3 * (gemm.FINISH_BLOCK // columns) + 5
    out = rng.choice(edge, (rows, columns))
    bias = None if bias_dtype is None else rng.choice(edge, columns).astype(bias_dtype)
    expected = out.copy()
    mask = np.zeros(out.shape, bool)
    with np.errstate(invalid="ignore"):  # inf + -inf
        if bias is not None:
            expected += bias
        expected = np.maximum(expected, 0)
        got = gemm._finish(out, bias, mask)
    expected_mask = expected > 0
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
    assert np.array_equal(mask, expected_mask) and 0 < mask.sum() < mask.size
