"""Keras' defaults: glorot-uniform kernels, zero biases, learning rates, batch size 32, rmsprop."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras


def glorot_limit(fan_in, fan_out):
    return np.sqrt(6.0 / (fan_in + fan_out))


@pytest.mark.parametrize(
    "layer, input_shape, fan_in, fan_out",
    [
        (lambda: keras.layers.Dense(300), (400,), 400, 300),
        (lambda: keras.layers.Conv2D(64, kernel_size=(3, 3)), (12, 12, 32), 3 * 3 * 32, 3 * 3 * 64),
    ],
)
def test_kernels_are_glorot_uniform_and_biases_zero(layer, input_shape, fan_in, fan_out):
    layer = layer()
    layer(keras.Input(shape=input_shape))
    kernel, bias = layer.get_weights()
    limit = glorot_limit(fan_in, fan_out)
    assert np.abs(kernel).max() <= limit
    assert np.abs(kernel).max() > 0.99 * limit  # tens of thousands of draws reach the edge
    assert abs(kernel.mean()) < 0.01 * limit
    assert np.var(kernel) == pytest.approx(limit**2 / 3, rel=0.03)  # uniform, not normal
    assert kernel.dtype == np.float32 and not bias.any()


@pytest.mark.parametrize(
    "name, cls, rate",
    [
        ("sgd", keras.optimizers.SGD, 0.01),
        ("adam", keras.optimizers.Adam, 0.001),
        ("rmsprop", keras.optimizers.RMSprop, 0.001),
    ],
)
def test_optimizer_default_learning_rates(name, cls, rate):
    assert cls().learning_rate == pytest.approx(rate)
    model = tiny_dense_model()
    model.compile(name, "sparse_categorical_crossentropy")
    assert isinstance(model.optimizer, cls) and model.optimizer.learning_rate == pytest.approx(rate)


def test_compile_default_optimizer_is_rmsprop():
    model = tiny_dense_model()
    model.compile(loss="mse")
    assert isinstance(model.optimizer, keras.optimizers.RMSprop)


def test_fit_default_batch_size_is_32():
    x, y = tiny_classification(n=70)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy")
    sizes = []
    model.fit(
        x,
        y,
        epochs=1,
        verbose=0,
        callbacks=[keras.callbacks.LambdaCallback(on_batch_end=lambda batch, logs: sizes.append(batch))],
    )
    assert len(sizes) == 3  # ceil(70 / 32)
    assert model.optimizer.iterations == 3


def test_fit_evaluate_predict_default_verbose_prints_progress(capsys):
    x, y = tiny_classification(n=40)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1)
    assert capsys.readouterr().out.startswith("Epoch 1/1\n2/2 [")
    model.evaluate(x, y)
    assert capsys.readouterr().out.startswith("2/2 [")
    model.predict(x)
    assert capsys.readouterr().out.startswith("2/2 [")
