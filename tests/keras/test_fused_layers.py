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


def _trained_weights(model_fn, monkeypatch, through):
    """The weights after two steps of ``fit`` on random data, and how many times max pooling took its gradient through
    a Conv2D with ReLU (``through``: whether it may)."""
    from ipu_teach.autograd.ops import MaxPool2DOp

    taken = []
    backward_through = MaxPool2DOp.backward_through.__func__

    def counted(cls, ctx, grad, producer):
        result = backward_through(cls, ctx, grad, producer) if through else None
        taken.append(result is not None)
        return result

    monkeypatch.setattr(MaxPool2DOp, "backward_through", classmethod(counted))
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    model = model_fn()
    model.compile(keras.optimizers.SGD(0.01), "categorical_crossentropy")
    rng = np.random.default_rng(0)
    x = rng.random((32, 28, 28, 1)).astype(np.float32)
    y = keras.utils.to_categorical(rng.integers(0, 10, 32), 10)
    model.fit(x, [y] * len(model.outputs) if len(model.outputs) > 1 else y, batch_size=16, epochs=1, verbose=0)
    return model.get_weights(), taken


def _tutorial_cnn():
    from ipu_teach.examples import tutorial_model_fn

    return keras.Model(*tutorial_model_fn())


def _cnn_also_giving_its_first_features():
    """A model whose first ReLU'd features are an output too (trained to a loss of their own): used twice."""
    inputs = keras.Input((28, 28, 1))
    features = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    x = keras.layers.MaxPooling2D()(features)
    x = keras.layers.MaxPooling2D()(keras.layers.Conv2D(8, 3, activation="relu")(x))
    classes = keras.layers.Dense(10, activation="softmax")(keras.layers.Flatten()(x))
    flat = keras.layers.Dense(10, activation="softmax")(keras.layers.Flatten()(features))
    return keras.Model(inputs, [classes, flat])


@pytest.mark.parametrize(
    "model_fn, taken",
    [(_tutorial_cnn, [True, True]), (_cnn_also_giving_its_first_features, [True])],  # the first features: not asked
)
def test_max_pooling_takes_its_gradient_through_a_relu_conv_only_as_its_one_use_and_changes_no_number(
    monkeypatch, model_fn, taken
):
    fused, fused_taken = _trained_weights(model_fn, monkeypatch, through=True)
    separate, separate_taken = _trained_weights(model_fn, monkeypatch, through=False)
    assert fused_taken == taken * 2 and len(separate_taken) == len(fused_taken)  # two steps, the last pooling first
    for one, other in zip(fused, separate, strict=True):
        assert one.tobytes() == other.tobytes()
