"""The backward of the ops behind Keras' wider layers against central differences in float64: dilated,
transposed and depthwise convolutions on geometries drawn by hypothesis, Keras' ReLU options and
nearest-neighbour upsampling."""

import numpy as np
import pytest
from autograd_strategies import conv_geometry, seeds
from helpers.gradcheck import away_from_zero, check_gradients
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach.autograd import ops

SETTINGS = settings(max_examples=15, deadline=None)
dilations = st.tuples(st.integers(1, 3), st.integers(1, 3))


def _dilated(g, dilation):
    """A drawn geometry with ``dilation`` where it fits: strides 1 (Keras refuses both above 1), and a 'valid'
    input as large as the dilated kernel."""
    g = dict(g, strides=(1, 1))
    g["h"], g["w"] = max(g["h"], (g["kh"] - 1) * dilation[0] + 1), max(g["w"], (g["kw"] - 1) * dilation[1] + 1)
    return g


@SETTINGS
@given(g=conv_geometry(), dilation=dilations, seed=seeds)
def test_dilated_conv2d_gradients(g, dilation, seed):
    g, rng = _dilated(g, dilation), np.random.default_rng(seed)
    x = rng.normal(size=(g["n"], g["h"], g["w"], g["c"]))
    kernel, bias = rng.normal(size=(g["kh"], g["kw"], g["c"], g["filters"])), rng.normal(size=(g["filters"],))
    check_gradients(
        lambda *t: ops.Conv2DOp.apply(*t, padding=g["padding"], dilation=dilation), [x, kernel, bias], seed=seed
    )


@SETTINGS
@given(g=conv_geometry(), dilation=dilations, use_dilation=st.booleans(), seed=seeds)
def test_conv2d_transpose_gradients(g, dilation, use_dilation, seed):
    """Any stride (a kernel smaller than the stride leaves output rows no window reaches), or a dilation."""
    if use_dilation:
        g = dict(g, strides=(1, 1))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(g["n"], g["h"] // 2 + 1, g["w"] // 2 + 1, g["c"]))
    kernel, bias = rng.normal(size=(g["kh"], g["kw"], g["filters"], g["c"])), rng.normal(size=(g["filters"],))
    options = dict(strides=g["strides"], padding=g["padding"], dilation=dilation if use_dilation else (1, 1))
    check_gradients(lambda *t: ops.Conv2DTransposeOp.apply(*t, **options), [x, kernel, bias], seed=seed)


@SETTINGS
@given(g=conv_geometry(), dilation=dilations, use_dilation=st.booleans(), seed=seeds)
def test_depthwise_conv2d_gradients(g, dilation, use_dilation, seed):
    if use_dilation:
        g = _dilated(g, dilation)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(g["n"], g["h"], g["w"], g["c"]))
    kernel = rng.normal(size=(g["kh"], g["kw"], g["c"], g["filters"]))
    options = dict(strides=g["strides"], padding=g["padding"], dilation=dilation if use_dilation else (1, 1))
    check_gradients(lambda *t: ops.DepthwiseConv2DOp.apply(*t, **options), [x, kernel], seed=seed)


@pytest.mark.parametrize(
    "options",
    [
        dict(alpha=0.3),
        dict(max_value=1.0),
        dict(max_value=6.0, alpha=0.2),
        dict(threshold=0.5),
        dict(alpha=0.1, max_value=1.5, threshold=0.5),
    ],
    ids=str,
)
@SETTINGS
@given(seed=seeds)
def test_general_relu_gradient(options, seed):
    """Values kept 0.05 or more away from every kink (0, the threshold, the ceiling)."""
    rng = np.random.default_rng(seed)
    x = away_from_zero(rng, (4, 5), low=0.05, high=2.5)
    kinks = [0.0, options.get("threshold", 0.0), options.get("max_value") or 0.0]
    for kink in kinks:
        x = np.where(np.abs(x - kink) < 0.05, kink + 0.1, x)
    check_gradients(lambda t: ops.GeneralReLUOp.apply(t, **options), [x], seed=seed)


@SETTINGS
@given(size=st.tuples(st.integers(1, 3), st.integers(1, 3)), seed=seeds)
def test_upsample_gradient(size, seed):
    x = np.random.default_rng(seed).normal(size=(2, 3, 2, 2))
    check_gradients(lambda t: ops.UpsampleOp.apply(t, size=size), [x], seed=seed)
