"""Regularizers as Keras: L1, L2 and L1L2 penalties on weights (``kernel_regularizer`` and the like) and
on outputs (``activity_regularizer``), listed in ``model.losses`` and added to the loss ``fit`` minimises
and reports, compared with tf-keras (``golden/regularizers.json``, written by tools/make_keras_goldens.py)."""

import json
import pathlib

import golden_models
import numpy as np
import pytest
from keras_helpers import single_ipu_scope

import ipu_teach.keras as keras

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "regularizers.json").read_text())


def _model_with_keras_weights():
    model = golden_models.regularized_model(keras)
    model.set_weights([np.asarray(w, np.float32) for w in GOLDEN["weights"]])
    return model


X, Y = np.asarray(GOLDEN["x"], np.float32), np.asarray(GOLDEN["y"])


def test_model_losses_are_keras_penalties_in_keras_order():
    model = _model_with_keras_weights()
    assert len(model.losses) == 7  # the weights' penalties; the activity one comes with a call
    model(X, training=True)
    np.testing.assert_allclose([float(loss.data) for loss in model.losses], GOLDEN["losses_after_call"], rtol=1e-5)
    model(X[:4], training=True)  # a new call replaces the activity penalty, as in Keras
    assert len(model.losses) == 8


@pytest.mark.parametrize("device", ["cpu", "ipu"])
def test_fit_minimises_and_reports_the_loss_with_the_penalties_as_keras(device):
    """Two epochs of SGD: the history (which includes the penalties), the trained weights and evaluate's loss."""
    if device == "ipu":
        with single_ipu_scope():
            model = _model_with_keras_weights()
            model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", steps_per_execution=2)
    else:
        model = _model_with_keras_weights()
        model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    history = model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], GOLDEN["history"]["loss"], rtol=1e-5)
    for mine, keras_weight in zip(model.get_weights(), GOLDEN["trained_weights"]):
        np.testing.assert_allclose(mine, keras_weight, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(model.evaluate(X, Y, batch_size=4, verbose=0), GOLDEN["evaluate"], rtol=1e-5)


def test_regularizer_names_and_classes_have_keras_defaults_and_configs():
    configs = GOLDEN["configs"]
    assert keras.regularizers.get("l1_l2").get_config() == configs["l1_l2"]
    assert keras.regularizers.L1L2().get_config() == configs["L1L2()"]
    assert keras.regularizers.get("l2").get_config() == configs["l2"]
    serialized = keras.regularizers.serialize(keras.regularizers.l1(0.3))
    assert {k: serialized[k] for k in ("class_name", "config")} == {
        k: configs["serialized"][k] for k in ("class_name", "config")
    }
    assert keras.regularizers.get(configs["serialized"]).get_config() == configs["serialized"]["config"]


@pytest.mark.parametrize(
    ("identifier", "message"),
    [
        ("l3", "Could not interpret regularizer identifier: l3"),
        (3, "Could not interpret regularizer identifier: 3"),
    ],
)
def test_unknown_regularizers_are_refused(identifier, message):
    with pytest.raises(ValueError, match=message):
        keras.layers.Dense(2, kernel_regularizer=identifier)


@pytest.mark.parametrize("penalty", ["0.1", float("nan"), float("inf")])
def test_penalties_must_be_finite_numbers(penalty):
    with pytest.raises(ValueError, match=f"Value {penalty} is not a valid regularization penalty number"):
        keras.regularizers.L2(penalty)


def test_regularized_models_save_and_load_with_their_penalties(tmp_path):
    model = _model_with_keras_weights()
    model.save(tmp_path / "regularized.keras")
    loaded = keras.models.load_model(tmp_path / "regularized.keras", compile=False)
    loaded(X, training=True), model(X, training=True)
    np.testing.assert_allclose(
        [float(loss.data) for loss in loaded.losses], [float(loss.data) for loss in model.losses], rtol=1e-6
    )
    dense = json.loads(json.dumps(model.layers[-1].get_config()))
    assert dense["kernel_regularizer"] == "l1_l2" and dense["bias_regularizer"]["class_name"] == "L1L2"


def test_a_layer_alone_keeps_the_activity_penalty_of_its_latest_call():
    layer = keras.layers.Dense(1, kernel_initializer="ones", use_bias=False, activity_regularizer="l1")
    assert layer.losses == []
    layer(np.ones((2, 3), np.float32))
    layer(np.ones((4, 3), np.float32) * 2)
    [penalty] = layer.losses
    np.testing.assert_allclose(penalty.data, 0.01 * (4 * 6.0) / 4, rtol=1e-6)  # l1 * sum(|y|) / batch


def test_a_custom_layers_add_weight_takes_a_regularizer():
    """``add_weight(regularizer=...)``, as Keras' base layer: the penalty is in ``losses`` and its gradient
    reaches the weight."""
    layer = keras.layers.Layer(name="custom")
    weight = layer.add_weight("w", (3,), initializer="ones", regularizer=keras.regularizers.l1(0.5))
    [penalty] = layer.losses
    np.testing.assert_allclose(penalty.data, 1.5)
    penalty.backward()
    np.testing.assert_allclose(weight.grad, [0.5, 0.5, 0.5])


PENALTIES = {"l1": lambda w: 0.01 * np.abs(w).sum(), "l2": lambda w: 0.01 * np.square(w).sum()}


@pytest.mark.parametrize(
    ("layer", "shape", "penalised"),
    [
        (lambda: keras.layers.Embedding(5, 2, embeddings_regularizer="l2"), (3,), [("embeddings", "l2")]),
        (
            lambda: keras.layers.LSTM(2, kernel_regularizer="l1", recurrent_regularizer="l2", bias_regularizer="l2"),
            (3, 2),
            [("kernel", "l1"), ("recurrent_kernel", "l2"), ("bias", "l2")],
        ),
        (lambda: keras.layers.GRU(2, recurrent_regularizer="l1"), (3, 2), [("recurrent_kernel", "l1")]),
        (lambda: keras.layers.DepthwiseConv2D(2, depthwise_regularizer="l2"), (3, 3, 2), [("depthwise_kernel", "l2")]),
    ],
    ids=["Embedding", "LSTM", "GRU", "DepthwiseConv2D"],
)
def test_every_regularized_weight_of_a_layer_has_its_penalty(layer, shape, penalised):
    made = layer()
    made(np.ones((2,) + shape, np.float32))
    by_name = {w.name.split("/")[-1].split(":")[0]: w.data for w in made.weights}
    expected = [PENALTIES[kind](by_name[name]) for name, kind in penalised]
    np.testing.assert_allclose([float(loss.data) for loss in made.losses], expected, rtol=1e-5)
