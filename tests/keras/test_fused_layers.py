"""Layers whose built-in activation runs fused with their op (``autograd.ops.fused``): the same numbers and the same
records for the simulated IPU as the op and its activation applied one after the other."""

import dataclasses

import numpy as np
import pytest

from ipu_teach import keras
from ipu_teach.autograd import Tensor, record


def _records(tape):
    return [{k: v for k, v in dataclasses.asdict(r).items() if k != "scope"} for r in tape]


def _layer_and_plain_twin(activation):
    """A Conv2D with ``activation`` and one without, with the same weights."""
    x = np.random.default_rng(0).normal(size=(4, 9, 9, 3)).astype(np.float32)
    layer, plain = keras.layers.Conv2D(5, 3, activation=activation), keras.layers.Conv2D(5, 3)
    layer(x), plain(x)
    plain.set_weights([w + np.float32(0.1) for w in layer.get_weights()])
    layer.set_weights(plain.get_weights())
    return Tensor(x, requires_grad=True), layer, plain


@pytest.mark.parametrize(
    "activation, recorded",
    [
        ("relu", ["Conv2D", "ReLU"]),  # fused: one application, recorded as the two ops
        (keras.activations.relu, ["Conv2D", "ReLU"]),
        (lambda y: keras.activations.relu(y, alpha=0.1), ["Conv2D", "GeneralReLU"]),  # not fusable: two ops
        ("tanh", ["Conv2D", "Tanh"]),
    ],
)
def test_conv2d_with_an_activation_computes_and_records_as_the_conv_then_the_activation(activation, recorded):
    x, layer, plain = _layer_and_plain_twin(activation)
    with record() as fused_tape:
        y = layer(x)
    with record() as plain_tape:
        expected = keras.activations.get(activation)(plain(x))
    assert y.numpy().tobytes() == expected.numpy().tobytes()
    assert [r.op for r in fused_tape] == recorded and _records(fused_tape) == _records(plain_tape)
    fused = y.node.function.op_name == "Conv2DReLU"  # one application on the host
    assert fused == (recorded == ["Conv2D", "ReLU"])
    y.backward(np.ones(y.shape, np.float32))
    fused_grad = x.grad
    x.grad = None
    expected.backward(np.ones(y.shape, np.float32))
    assert fused_grad.tobytes() == x.grad.tobytes()
