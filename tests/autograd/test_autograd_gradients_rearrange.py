"""Backward against central differences (float64, hypothesis-drawn shapes) for the ops behind the
merge, reshaping, embedding and normalisation layers: Slice, Concatenate, Transpose, Pad, Gather
and LayerNorm."""

import numpy as np
import pytest
from autograd_strategies import seeds, shapes
from helpers.gradcheck import check_gradients
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach.autograd import ops

SETTINGS = settings(max_examples=15, deadline=None)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_slice_gradient(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    start = data.draw(st.integers(0, shape[axis] - 1))
    stop = data.draw(st.integers(start + 1, shape[axis]))
    x = np.random.default_rng(seed).normal(size=shape)
    check_gradients(lambda t: ops.SliceOp.apply(t, axis=axis, start=start, stop=stop), [x], seed=seed)


@SETTINGS
@given(shape=shapes, sizes=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data(), seed=seeds)
def test_concatenate_gradient_splits_back_to_each_input(shape, sizes, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=shape[:axis] + (n,) + shape[axis + 1 :]) for n in sizes]
    check_gradients(lambda *t: ops.ConcatenateOp.apply(*t, axis=axis), arrays, seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_transpose_gradient(shape, data, seed):
    perm = data.draw(st.permutations(range(len(shape))))
    x = np.random.default_rng(seed).normal(size=shape)
    check_gradients(lambda t: ops.TransposeOp.apply(t, perm=tuple(perm)), [x], seed=seed)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_pad_gradient(shape, data, seed):
    pads = tuple(data.draw(st.tuples(st.integers(0, 2), st.integers(0, 2))) for _ in shape)
    x = np.random.default_rng(seed).normal(size=shape)
    check_gradients(lambda t: ops.PadOp.apply(t, pads=pads), [x], seed=seed)


@SETTINGS
@given(rows=st.integers(1, 5), width=st.integers(1, 3), index_shape=shapes, seed=seeds)
def test_gather_gradient_adds_repeated_indices(rows, width, index_shape, seed):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, rows, size=index_shape)  # repeats are likely: their gradients must add
    check_gradients(ops.GatherOp.apply, [rng.normal(size=(rows, width)), indices], wrt=[0], seed=seed)


@SETTINGS
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(2, 5)), seed=seeds)
def test_layer_norm_gradients(shape, seed):
    rng = np.random.default_rng(seed)
    features = shape[-1]
    check_gradients(
        lambda x, g, b: ops.LayerNormOp.apply(x, g, b),
        [rng.normal(size=shape), rng.normal(size=features), rng.normal(size=features)],
        seed=seed,
    )


def test_gather_rejects_indices_outside_the_table():
    import pytest

    with pytest.raises(ValueError, match=r"Gather: indices must be in \[0, 3\), got values from 0 to 3"):
        ops.GatherOp.apply(np.ones((3, 2)), np.array([0, 3]))


@SETTINGS
@given(shape=shapes, data=st.data(), seed=seeds)
def test_indexing_a_tensor_as_tensorflow_does_keeps_the_gradient(shape, data, seed):
    # x[key] with an integer, a slice with a step, ... and tf.newaxis: TensorFlow's strided slice
    axis = data.draw(st.integers(0, len(shape) - 1))
    start = data.draw(st.integers(0, shape[axis] - 1))
    step = data.draw(st.integers(1, 2))
    key = (Ellipsis,) if axis == len(shape) - 1 else ()
    key = (slice(None),) * axis + (slice(start, None, step),) + key
    x = np.random.default_rng(seed).normal(size=shape)
    check_gradients(lambda t: t[key], [x], seed=seed)
    check_gradients(lambda t: t[(None, start) if axis == 0 else (Ellipsis, None)], [x], seed=seed)


def test_indexing_a_tensor_gives_numpys_values_and_refuses_what_tensorflow_refuses():
    from ipu_teach.autograd import Tensor

    x = Tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    assert np.array_equal(x[:, 1:3, :].data, np.arange(24.0).reshape(2, 3, 4)[:, 1:3, :])
    assert x[np.int32(1), ..., None].shape == (3, 4, 1)  # an integer tensor of one value counts as its integer
    for bad in ([0, 1], np.array([0, 1]), 1.0):
        with pytest.raises(TypeError, match=r"Only integers, slices \(`:`\), ellipsis \(`...`\), tf.newaxis"):
            x[bad]
