"""Every op's backward against central differences in float64, on shapes, strides, pool sizes and
paddings drawn by hypothesis (values come from a drawn seed, kept clear of kinks and ties)."""

import numpy as np
import pytest
from autograd_strategies import conv_geometry, pool_geometry, seeds, shapes
from helpers.gradcheck import away_from_zero, check_gradients, distinct
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from ipu_teach.autograd import Tensor, ops
from ipu_teach.autograd.ops.gelu import GELUOp

SETTINGS = settings(max_examples=15, deadline=None)


def rng_for(seed):
    return np.random.default_rng(seed)


# ----- elementwise, with broadcasting ----------------------------------------------------------------

pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


@pytest.mark.parametrize("op", [ops.AddOp, ops.SubOp, ops.MulOp, ops.DivOp])
@SETTINGS
@given(pair=pairs, seed=seeds)
def test_binary_elementwise_gradients_with_broadcasting(op, pair, seed):
    rng = rng_for(seed)
    a = rng.normal(size=pair.input_shapes[0])
    b = away_from_zero(rng, pair.input_shapes[1], low=0.5)  # Div needs b clear of zero
    check_gradients(op.apply, [a, b], seed=seed)


@pytest.mark.parametrize(
    "op, values",
    [
        (ops.NegOp, "normal"),
        (ops.AbsOp, "away"),
        (ops.ReLUOp, "away"),
        (ops.SigmoidOp, "normal"),
        (ops.TanhOp, "normal"),
        (ops.ExpOp, "normal"),
        (ops.LogOp, "positive"),
        (ops.SoftplusOp, "normal"),
        (ops.ELUOp, "away"),
        (ops.SoftmaxOp, "normal"),
        (GELUOp, "normal"),
    ],
)
@SETTINGS
@given(shape=shapes, seed=seeds)
def test_unary_gradients(op, values, shape, seed):
    rng = rng_for(seed)
    x = {
        "normal": lambda: rng.normal(scale=2.0, size=shape),
        "away": lambda: away_from_zero(rng, shape),
        "positive": lambda: rng.uniform(0.2, 3.0, size=shape),
    }[values]()
    check_gradients(op.apply, [x], seed=seed)


@SETTINGS
@given(shape=shapes, alpha=st.floats(0.1, 2.0), seed=seeds)
def test_elu_gradient_with_alpha(shape, alpha, seed):
    x = away_from_zero(rng_for(seed), shape)
    check_gradients(lambda t: ops.ELUOp.apply(t, alpha=alpha), [x], seed=seed)


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_approximate_gelu_gradient(shape, seed):
    x = rng_for(seed).normal(scale=2.0, size=shape)
    check_gradients(lambda t: GELUOp.apply(t, approximate=True), [x], seed=seed)


# ----- matmul, reductions, reshape -------------------------------------------------------------------


@SETTINGS
@given(batch=st.lists(st.integers(1, 3), min_size=1, max_size=2), k=st.integers(1, 4), n=st.integers(1, 4), seed=seeds)
def test_matmul_gradients(batch, k, n, seed):
    rng = rng_for(seed)
    check_gradients(ops.MatMulOp.apply, [rng.normal(size=tuple(batch) + (k,)), rng.normal(size=(k, n))], seed=seed)


@pytest.mark.parametrize("op", [ops.SumOp, ops.MeanOp])
@SETTINGS
@given(shape=shapes, data=st.data(), keepdims=st.booleans(), seed=seeds)
def test_reduction_gradients(op, shape, data, keepdims, seed):
    axes = data.draw(
        st.one_of(
            st.none(),
            st.sets(st.integers(-len(shape), len(shape) - 1), min_size=1)
            .filter(lambda s: len({a % len(shape) for a in s}) == len(s))
            .map(tuple),
        )
    )
    x = rng_for(seed).normal(size=shape)
    check_gradients(lambda t: op.apply(t, axis=axes, keepdims=keepdims), [x], seed=seed)


@SETTINGS
@given(shape=shapes, seed=seeds)
def test_reshape_gradient(shape, seed):
    x = rng_for(seed).normal(size=shape)
    check_gradients(lambda t: ops.ReshapeOp.apply(t, shape=(-1,) + shape[:1]), [x], seed=seed)


# ----- convolution and pooling -----------------------------------------------------------------------


@SETTINGS
@given(g=conv_geometry(), seed=seeds)
def test_conv2d_gradients_for_input_kernel_and_bias(g, seed):
    rng = rng_for(seed)
    x = rng.normal(size=(g["n"], g["h"], g["w"], g["c"]))
    kernel = rng.normal(size=(g["kh"], g["kw"], g["c"], g["filters"]))
    bias = rng.normal(size=(g["filters"],))
    check_gradients(
        lambda *t: ops.Conv2DOp.apply(*t, strides=g["strides"], padding=g["padding"]), [x, kernel, bias], seed=seed
    )


@pytest.mark.parametrize("op", [ops.MaxPool2DOp, ops.AvgPool2DOp])
@SETTINGS
@given(geometry=pool_geometry(), seed=seeds)
def test_pool_gradients(op, geometry, seed):
    shape, params = geometry
    x = distinct(rng_for(seed), shape)
    check_gradients(lambda t: op.apply(t, **params), [x], seed=seed)


# ----- losses (gradients for the predictions; labels take none) ------------------------------------


@st.composite
def batch_and_classes(draw):
    return draw(st.integers(1, 4)), draw(st.integers(2, 5))


@SETTINGS
@given(bc=batch_and_classes(), soft=st.booleans(), seed=seeds)
def test_softmax_cross_entropy_gradient(bc, soft, seed):
    rng = rng_for(seed)
    n, k = bc
    labels = rng.dirichlet(np.ones(k), size=n) if soft else np.eye(k)[rng.integers(0, k, n)]
    check_gradients(ops.SoftmaxCrossEntropyOp.apply, [rng.normal(scale=3, size=(n, k)), labels], wrt=[0], seed=seed)


@SETTINGS
@given(bc=batch_and_classes(), seed=seeds)
def test_sparse_softmax_cross_entropy_gradient(bc, seed):
    rng = rng_for(seed)
    n, k = bc
    check_gradients(
        ops.SparseSoftmaxCrossEntropyOp.apply,
        [rng.normal(scale=3, size=(n, k)), rng.integers(0, k, n)],
        wrt=[0],
        seed=seed,
    )


@SETTINGS
@given(bc=batch_and_classes(), seed=seeds)
def test_categorical_crossentropy_on_probabilities_gradient(bc, seed):
    rng = rng_for(seed)
    n, k = bc
    probs = rng.uniform(0.1, 1.0, size=(n, k))  # unnormalised on purpose: the op normalises
    labels = rng.dirichlet(np.ones(k), size=n)
    check_gradients(ops.CategoricalCrossentropyProbsOp.apply, [probs, labels], wrt=[0], seed=seed)
    sparse = rng.integers(0, k, size=n)
    check_gradients(ops.SparseCategoricalCrossentropyProbsOp.apply, [probs, sparse], wrt=[0], seed=seed)


@SETTINGS
@given(shape=st.tuples(st.integers(1, 4), st.integers(1, 3)), seed=seeds)
def test_binary_crossentropy_gradients(shape, seed):
    rng = rng_for(seed)
    labels = rng.uniform(0, 1, size=shape)
    check_gradients(
        ops.SigmoidBinaryCrossentropyOp.apply, [rng.normal(scale=3, size=shape), labels], wrt=[0], seed=seed
    )
    check_gradients(
        ops.BinaryCrossentropyProbsOp.apply, [rng.uniform(0.05, 0.95, size=shape), labels], wrt=[0], seed=seed
    )


# ----- batch normalisation ---------------------------------------------------------------------------


@SETTINGS
@given(shape=st.tuples(st.integers(2, 4), st.integers(1, 3), st.integers(1, 3)), training=st.booleans(), seed=seeds)
def test_batch_norm_gradients(shape, training, seed):
    """In training the statistics are the batch's own, so the check recomputes them from x each time."""
    rng = rng_for(seed)
    channels = shape[-1]
    moving_mean, moving_var = rng.normal(size=channels), rng.uniform(0.5, 2, size=channels)
    axes = tuple(range(len(shape) - 1))

    def batch_norm(x, gamma, beta):
        mean, var = (x.data.mean(axis=axes), x.data.var(axis=axes)) if training else (moving_mean, moving_var)
        return ops.BatchNormOp.apply(x, gamma, beta, Tensor(mean), Tensor(var), training=training)

    check_gradients(
        batch_norm, [rng.normal(size=shape), rng.normal(size=channels), rng.normal(size=channels)], seed=seed
    )


# ----- a graph: a value used twice, so gradients from both uses must add up ------------------------


@SETTINGS
@given(n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3), seed=seeds)
def test_gradients_accumulate_through_a_graph(n, k, m, seed):
    rng = rng_for(seed)

    def net(x, w, b):
        h = ops.TanhOp.apply(x @ w + b)
        return (h * h - h / 2.0).sum(axis=1) + x.mean()

    check_gradients(net, [rng.normal(size=(n, k)), rng.normal(size=(k, m)), rng.normal(size=(m,))], seed=seed)
