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


# ----- max pooling's gradient through a Conv2D with ReLU (MaxPool2DOp.backward_through) ------------------------------

POOLED = [
    ((8, 28, 28, 1), (3, 3, 1, 32), {}, {"pool_size": (2, 2)}),  # the tutorial's first layer and pooling
    ((6, 13, 13, 32), (3, 3, 32, 64), {}, {"pool_size": (2, 2)}),  # its second: 11 x 11, a row and column uncovered
    ((3, 9, 9, 2), (2, 2, 2, 3), {"padding": "same"}, {"pool_size": (2, 2), "padding": "same"}),  # padded windows
    ((3, 10, 10, 2), (3, 3, 2, 4), {}, {"pool_size": (3, 3)}),  # nine offsets, two rows and columns uncovered
]


def _special(shape, rng, rate=0.03):
    """Values with ties, NaN of either sign, infinities and signed zeros among them (a ``rate`` of them)."""
    x = rng.integers(-3, 4, size=shape).astype(np.float64) / 2
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0])
    where = rng.random(shape) < rate
    x[where] = rng.choice(specials, size=int(where.sum()))
    return x


def _conv_relu_pool(fused, arrays, grad, conv_params, pool_params, also_relu_output=False):
    """The pooled output, the three gradients and the records of MaxPool2D(ReLU(Conv2D(...))): with ``fused`` the
    Conv2DReLU op, else Conv2D and ReLU one by one; with ``also_relu_output``, the sum of the ReLU's output is added
    to what is differentiated (a second use of it)."""
    tensors = [Tensor(a.copy(), requires_grad=True) for a in arrays]
    with record() as tape, np.errstate(invalid="ignore", over="ignore"):  # infinities times zeros
        conv = ops.Conv2DReLUOp.apply if fused else lambda *t, **p: ops.ReLUOp.apply(ops.Conv2DOp.apply(*t, **p))
        y = conv(*tensors, **conv_params)
        z = ops.MaxPool2DOp.apply(y, **pool_params)
        target = ops.mul(z, Tensor(grad))
        target = ops.add(ops.reduce_sum(target), ops.reduce_sum(y)) if also_relu_output else ops.reduce_sum(target)
        target.backward()
    return [z.array] + [t.grad for t in tensors], [repr(dataclasses.asdict(r)) for r in tape]


def _one_by_one(monkeypatch, *args, **kwargs):
    """``_conv_relu_pool`` with every backward run by the tape one op after the other, as before fusing them."""
    with monkeypatch.context() as patch:
        patch.setattr(ops.MaxPool2DOp, "backward_through", classmethod(lambda *_: None))
        return _conv_relu_pool(*args, **kwargs)


def _pooled_case(dtype, x_shape, k_shape, conv_params, pool_params, seed=5):
    rng = np.random.default_rng(seed)
    rate = 0.3 / np.prod(k_shape[:3])  # an output in three sees a special value of the input
    arrays = [_special(x_shape, rng, rate), 0.3 * rng.normal(size=k_shape), _special(k_shape[3:], rng, 0.1)]
    arrays = [a.astype(dtype) for a in arrays]
    with np.errstate(invalid="ignore", over="ignore"):
        pooled = ops.MaxPool2DOp.apply(ops.Conv2DOp.apply(*arrays, **conv_params), **pool_params).shape
    return arrays, _special(pooled, rng).astype(dtype)


def _refuse(*_):
    raise AssertionError("the tape ran ReLU's gradient on its own: the pooling did not take the gradient through it")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("x_shape, k_shape, conv_params, pool_params", POOLED)
def test_max_pooling_takes_its_gradient_through_relu_with_the_bits_of_the_backwards_one_by_one(
    monkeypatch, portable, dtype, x_shape, k_shape, conv_params, pool_params
):
    arrays, grad = _pooled_case(dtype, x_shape, k_shape, conv_params, pool_params)
    separate, separate_tape = _one_by_one(monkeypatch, False, arrays, grad, conv_params, pool_params)
    monkeypatch.setattr(ops.Conv2DReLUOp, "backward", staticmethod(_refuse))
    monkeypatch.setattr(ops.ReLUOp, "backward", classmethod(_refuse))
    for fused in (True, False):  # after Conv2DReLU, and after Conv2D then ReLU
        through, tape = _conv_relu_pool(fused, arrays, grad, conv_params, pool_params)
        for one, other in zip(separate, through, strict=True):
            assert one.dtype == other.dtype and one.tobytes() == other.tobytes()
        assert tape == separate_tape and [eval(r)["op"] for r in tape][:3] == ["Conv2D", "ReLU", "MaxPool2D"]
    assert np.isnan(through[0]).any() and np.isfinite(through[0]).any()  # windows with NaN, and without


@pytest.mark.parametrize("threads, block_samples", [(1, 3), (3, 1), (3, 2)])
def test_the_gradient_through_relu_is_the_same_in_any_blocks_and_pieces(monkeypatch, threads, block_samples):
    from ipu_teach.autograd.ops import parallel, pooling

    x_shape, k_shape, conv_params, pool_params = POOLED[0]
    arrays, grad = _pooled_case(np.float32, x_shape, k_shape, conv_params, pool_params)
    whole, _ = _one_by_one(monkeypatch, True, arrays, grad, conv_params, pool_params)
    monkeypatch.setattr(pooling, "CACHE_BLOCK", block_samples * 26 * 26 * 32)  # 8 samples: blocks of 3, 3, 2 ...
    monkeypatch.setattr(parallel, "THREADS", threads)
    monkeypatch.setattr(parallel, "SPLIT_ABOVE", 0)
    blocks, _ = _conv_relu_pool(True, arrays, grad, conv_params, pool_params)
    assert (whole[0] == 0).any()  # windows whose values ReLU made zeros: ties, routed to their first offset
    for one, other in zip(whole, blocks, strict=True):
        assert one.tobytes() == other.tobytes()


def test_a_relu_output_used_twice_sends_both_gradients_through_relus_own_backward(monkeypatch):
    """The pooling takes the gradient through only where it is the ReLU output's one use: with a second use, the
    convolution's gradient is the sum of both, which ReLU's own gradient must see."""
    arrays, grad = _pooled_case(np.float32, *POOLED[1])
    separate, _ = _one_by_one(monkeypatch, True, arrays, grad, {}, {"pool_size": (2, 2)}, also_relu_output=True)
    calls = []
    backward = ops.Conv2DReLUOp.backward
    monkeypatch.setattr(ops.Conv2DReLUOp, "backward", staticmethod(lambda ctx, g: calls.append(1) or backward(ctx, g)))
    fused, _ = _conv_relu_pool(True, arrays, grad, {}, {"pool_size": (2, 2)}, also_relu_output=True)
    assert calls == [1]
    for one, other in zip(separate, fused, strict=True):
        assert one.tobytes() == other.tobytes()


def test_overlapping_pooling_or_another_activation_before_it_run_their_own_backwards():
    """Only windows that tile have the notes to route by, and only an op that ends in ReLU passes the gradient where
    its output is positive."""
    rng = np.random.default_rng(1)
    x, kernel, bias = rng.normal(size=(2, 9, 9, 2)), rng.normal(size=(3, 3, 2, 3)), rng.normal(size=3)
    y = ops.Conv2DReLUOp.apply(Tensor(x, requires_grad=True), kernel, bias)
    overlapping = ops.MaxPool2DOp.apply(y, pool_size=(3, 3), strides=(2, 2))
    assert ops.MaxPool2DOp.backward_through(overlapping.node.ctx, np.ones(overlapping.shape), y.node) is None
    tanh = ops.TanhOp.apply(ops.Conv2DOp.apply(Tensor(x, requires_grad=True), kernel, bias))
    tiled = ops.MaxPool2DOp.apply(tanh, pool_size=(2, 2))
    assert ops.MaxPool2DOp.backward_through(tiled.node.ctx, np.ones(tiled.shape), tanh.node) is None
