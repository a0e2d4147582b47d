"""Forward results against loop references, and max-pool's first-maximum gradient routing."""

import autograd_reference as reference
import numpy as np
import pytest
from autograd_strategies import conv_geometry, pool_geometry, seeds
from helpers.gradcheck import distinct
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach.autograd import Tensor, ops
from ipu_teach.autograd.ops.conv import same_padding, window_geometry

SETTINGS = settings(max_examples=25, deadline=None)


@pytest.mark.parametrize(
    "size, window, stride, expected",
    [
        (5, 3, 1, (1, 1)),  # odd kernel, stride 1: symmetric
        (5, 2, 1, (0, 1)),  # even kernel: the extra row goes after
        (5, 2, 2, (0, 1)),  # 3 outputs need 6 rows
        (6, 3, 2, (0, 1)),  # 3 outputs need 7 rows
        (7, 4, 3, (1, 2)),  # 3 outputs need 10 rows
        (4, 1, 3, (0, 0)),  # windows that skip rows need no padding
        (2, 5, 1, (2, 2)),  # kernel larger than the input
    ],
)
def test_same_padding_follows_tensorflow(size, window, stride, expected):
    assert same_padding(size, window, stride) == expected == reference.tf_same_padding(size, window, stride)


@SETTINGS
@given(size=st.integers(1, 30), window=st.integers(1, 6), stride=st.integers(1, 6))
def test_same_padding_gives_ceil_outputs(size, window, stride):
    pads, outs = window_geometry((1, size, size, 1), (window, window), (stride, stride), "same")
    assert outs == [-(-size // stride)] * 2
    assert pads == [reference.tf_same_padding(size, window, stride)] * 2


@SETTINGS
@given(g=conv_geometry(), seed=seeds)
def test_conv2d_matches_a_direct_loop(g, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(g["n"], g["h"], g["w"], g["c"]))
    kernel = rng.normal(size=(g["kh"], g["kw"], g["c"], g["filters"]))
    bias = rng.normal(size=g["filters"])
    got = ops.Conv2DOp.apply(x, kernel, bias, strides=g["strides"], padding=g["padding"]).data
    np.testing.assert_allclose(
        got, reference.conv2d(x, kernel, bias, g["strides"], g["padding"]), rtol=1e-12, atol=1e-12
    )


def test_conv2d_rejects_a_kernel_larger_than_a_valid_input():
    with pytest.raises(ValueError, match="3x3 kernel does not fit an input of 2x5"):
        ops.Conv2DOp.apply(np.zeros((1, 2, 5, 1)), np.zeros((3, 3, 1, 1)), np.zeros(1))


def test_conv2d_rejects_a_kernel_for_other_channels():
    with pytest.raises(ValueError, match="3 channels but the kernel expects 2"):
        ops.Conv2DOp.apply(np.zeros((1, 4, 4, 3)), np.zeros((3, 3, 2, 1)), np.zeros(1))


@pytest.mark.parametrize("op, kind", [(ops.MaxPool2DOp, "max"), (ops.AvgPool2DOp, "mean")])
@SETTINGS
@given(geometry=pool_geometry(), seed=seeds)
def test_pooling_matches_a_loop_over_real_values(op, kind, geometry, seed):
    shape, params = geometry
    x = np.random.default_rng(seed).normal(size=shape)
    strides = params["strides"] or params["pool_size"]
    expected = reference.pool2d(x, params["pool_size"], strides, params["padding"], kind)
    np.testing.assert_allclose(op.apply(x, **params).data, expected, rtol=1e-12, atol=1e-12)


def test_average_pool_same_padding_averages_real_values_only():
    """A 3x3 input, 2x2 windows of stride 2 with 'same': the last row and column windows are part padding."""
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    y = ops.AvgPool2DOp.apply(x, pool_size=(2, 2), strides=(2, 2), padding="same").data[0, :, :, 0]
    np.testing.assert_allclose(y, [[(0 + 1 + 3 + 4) / 4, (2 + 5) / 2], [(6 + 7) / 2, 8]])


def test_max_pool_routes_a_flat_window_to_its_first_cell():
    """MNIST's backgrounds are flat: every window ties, and only its top-left cell gets the gradient."""
    x = Tensor(np.zeros((1, 4, 4, 1), dtype=np.float32), requires_grad=True)
    ops.MaxPool2DOp.apply(x, pool_size=(2, 2)).backward(np.arange(1.0, 5.0, dtype=np.float32).reshape(1, 2, 2, 1))
    expected = np.zeros((4, 4))
    expected[::2, ::2] = [[1, 2], [3, 4]]
    np.testing.assert_array_equal(x.grad[0, :, :, 0], expected)


def test_max_pool_routes_ties_to_the_first_maximum_in_row_major_order():
    x = np.array([[1, 5], [5, 5]], dtype=np.float32).reshape(1, 2, 2, 1)
    t = Tensor(x, requires_grad=True)
    ops.MaxPool2DOp.apply(t, pool_size=(2, 2)).backward(np.ones((1, 1, 1, 1), dtype=np.float32))
    np.testing.assert_array_equal(t.grad[0, :, :, 0], [[0, 1], [0, 0]])


@pytest.mark.parametrize(
    "shape, pool, padding",
    [
        ((3, 26, 26, 32), (2, 2), "valid"),  # the tutorial's first pooling
        ((3, 11, 11, 64), (2, 2), "valid"),  # its second: the last row and column are in no window
        ((2, 7, 5, 3), (3, 2), "same"),  # windows over -inf padding
        ((1, 32, 32, 2), (16, 16), "valid"),  # 256 offsets: more than a byte can number
    ],
)
def test_tiled_max_pool_gradient_is_the_first_maximum_compare_bit_for_bit(shape, pool, padding):
    """Strides equal to the pool: the forward's note of each window's first maximum routes the gradient exactly as
    comparing every input with its window's maximum does: ties, zeros of either sign, NaN windows (which route
    nothing) and negative gradients (whose unrouted products are -0.0) included."""
    from ipu_teach.autograd.ops.conv import crop_nhwc, pad_nhwc, window_geometry, window_slices

    rng = np.random.default_rng(7)
    x = rng.integers(-2, 3, size=shape).astype(np.float32)  # few levels: many ties
    x[x == -1] = -0.0
    x[0, 0, 0, 0] = np.nan
    t = Tensor(x, requires_grad=True)
    y = ops.MaxPool2DOp.apply(t, pool_size=pool, padding=padding)
    grad = rng.normal(size=y.shape).astype(np.float32)
    y.backward(grad)
    pads, outs = window_geometry(shape, pool, pool, padding)
    xp = pad_nhwc(x, pads, value=-np.inf)
    expected, taken = np.zeros(xp.shape, np.float32), np.zeros(y.shape, bool)
    for i in range(pool[0]):
        for j in range(pool[1]):
            first = (xp[window_slices(i, j, outs, pool)] == y.data) & ~taken
            taken |= first
            expected[window_slices(i, j, outs, pool)] = grad * first
    assert np.isnan(y.data[0, 0, 0, 0]) and t.grad[0, 0, 0, 0] == 0  # a NaN window: its maximum NaN, routed nowhere
    assert t.grad.tobytes() == crop_nhwc(expected, pads).tobytes()


@st.composite
def tied_values(draw, shape):
    """Few distinct levels, so windows hold several equal maxima."""
    seed = draw(seeds)
    return np.random.default_rng(seed).integers(0, draw(st.integers(1, 3)), size=shape).astype(np.float64)


@SETTINGS
@given(geometry=pool_geometry(), data=st.data())
def test_max_pool_backward_with_ties_matches_first_maximum_routing(geometry, data):
    """Overlapping, skipping and padded windows alike: each window's gradient lands on its first maximum."""
    shape, params = geometry
    x = data.draw(tied_values(shape))
    t = Tensor(x, requires_grad=True)
    y = ops.MaxPool2DOp.apply(t, **params)
    grad = np.random.default_rng(0).uniform(1, 2, size=y.shape)
    y.backward(grad)
    strides = params["strides"] or params["pool_size"]
    np.testing.assert_allclose(
        t.grad, reference.max_pool_backward(x, grad, params["pool_size"], strides, params["padding"])
    )


@SETTINGS
@given(geometry=pool_geometry(), seed=seeds)
def test_max_pool_gradient_sums_to_the_incoming_gradient(geometry, seed):
    """Each window sends its whole gradient to exactly one cell, however windows overlap."""
    shape, params = geometry
    t = Tensor(distinct(np.random.default_rng(seed), shape), requires_grad=True)
    y = ops.MaxPool2DOp.apply(t, **params)
    grad = np.random.default_rng(seed).uniform(1, 2, size=y.shape)
    y.backward(grad)
    np.testing.assert_allclose(t.grad.sum(axis=(1, 2)), grad.sum(axis=(1, 2)))


@SETTINGS
@given(n=st.integers(1, 4), k=st.integers(2, 6), seed=seeds)
def test_softmax_cross_entropy_equals_minus_log_probability_of_the_label(n, k, seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=3, size=(n, k))
    labels = rng.integers(0, k, n)
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    expected = -np.log(probs[np.arange(n), labels])
    close = dict(rtol=1e-9, atol=1e-12)  # -log(p) for p near 1 magnifies p's rounding
    np.testing.assert_allclose(ops.SparseSoftmaxCrossEntropyOp.apply(logits, labels).data, expected, **close)
    np.testing.assert_allclose(ops.SoftmaxCrossEntropyOp.apply(logits, np.eye(k)[labels]).data, expected, **close)
    np.testing.assert_allclose(
        ops.CategoricalCrossentropyProbsOp.apply(probs, np.eye(k)[labels]).data, expected, **close
    )
    np.testing.assert_allclose(ops.SoftmaxOp.apply(logits).data, probs, rtol=1e-12)


def test_probability_losses_clip_like_keras():
    """Keras clips probabilities to [1e-7, 1 - 1e-7] before the log."""
    probs, labels = np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]])
    np.testing.assert_allclose(ops.CategoricalCrossentropyProbsOp.apply(probs, labels).data, [-np.log(1e-7)])
    bce = -(np.log(1e-7 + 1e-7) + np.log(1 - (1 - 1e-7) + 1e-7)) / 2
    np.testing.assert_allclose(ops.BinaryCrossentropyProbsOp.apply(probs, labels).data, [bce])
    sparse = ops.SparseCategoricalCrossentropyProbsOp.apply(probs, np.array([0])).data  # log(clipped) as logits
    np.testing.assert_allclose(sparse, [-np.log(1e-7) + np.log(1e-7 + 1 - 1e-7)])


@SETTINGS
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 3)), seed=seeds)
def test_sigmoid_binary_crossentropy_equals_the_logistic_formula(shape, seed):
    rng = np.random.default_rng(seed)
    logits, labels = rng.normal(scale=3, size=shape), rng.uniform(0, 1, size=shape)
    p = 1 / (1 + np.exp(-logits))
    expected = -(labels * np.log(p) + (1 - labels) * np.log(1 - p)).mean(axis=-1)
    np.testing.assert_allclose(ops.SigmoidBinaryCrossentropyOp.apply(logits, labels).data, expected, rtol=1e-10)
    np.testing.assert_allclose(ops.SigmoidOp.apply(logits).data, p, rtol=1e-12)


def test_batch_norm_in_training_normalises_each_channel():
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(8, 5, 3))
    axes = (0, 1)
    y = ops.BatchNormOp.apply(
        x, np.ones(3), np.zeros(3), x.mean(axis=axes), x.var(axis=axes), epsilon=0.0, training=True
    ).data
    np.testing.assert_allclose(y.mean(axis=axes), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=axes), 1, rtol=1e-12)
