"""Loss and metric values: means over the batch, running means over the epoch weighted by batch size,
"accuracy" resolved as Keras does, and the softmax output using the logits underneath."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor


def numpy_log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def per_sample_crossentropy(model, x, y):
    """Per-sample sparse cross-entropy from the model's probabilities (float64)."""
    probs = model.predict(x, verbose=0).astype(np.float64)
    return -np.log(probs[np.arange(len(y)), y])


def test_loss_is_mean_over_batch():
    logits = np.array([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]], dtype=np.float32)
    labels = np.array([0, 1])
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, Tensor(logits))
    expected = -numpy_log_softmax(logits.astype(np.float64))[[0, 1], labels].mean()
    assert float(loss.data) == pytest.approx(expected, rel=1e-6)


def test_fit_logs_are_sample_weighted_running_means_with_uneven_last_batch():
    x, y = tiny_classification(n=10)
    model = tiny_dense_model()
    model.compile(
        keras.optimizers.SGD(learning_rate=1e-12), "sparse_categorical_crossentropy", metrics=["accuracy"]
    )  # a learning rate this small leaves the weights as they are
    batch_logs = []
    history = model.fit(
        x,
        y,
        batch_size=4,
        epochs=1,
        shuffle=False,
        verbose=0,
        callbacks=[keras.callbacks.LambdaCallback(on_batch_end=lambda batch, logs: batch_logs.append(dict(logs)))],
    )
    per_sample = per_sample_crossentropy(model, x, y)
    batch_means = [per_sample[s : s + 4].mean() for s in (0, 4, 8)]
    assert history.history["loss"][0] == pytest.approx(per_sample.mean(), rel=1e-5)
    assert abs(np.mean(batch_means) - per_sample.mean()) > 1e-3  # the data tells the two means apart
    assert batch_logs[0]["loss"] == pytest.approx(batch_means[0], rel=1e-5)
    assert batch_logs[1]["loss"] == pytest.approx(per_sample[:8].mean(), rel=1e-5)
    predicted = model.predict(x, verbose=0).argmax(-1)
    assert history.history["accuracy"][0] == pytest.approx((predicted == y).mean())
    assert batch_logs[0]["accuracy"] == pytest.approx((predicted[:4] == y[:4]).mean())


def test_evaluate_equals_numpy_over_whole_set():
    x, y = tiny_classification(n=23)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
    loss, accuracy = model.evaluate(x, y, batch_size=5, verbose=0)
    per_sample = per_sample_crossentropy(model, x, y)
    assert loss == pytest.approx(per_sample.mean(), rel=1e-5)
    assert accuracy == pytest.approx((model.predict(x, verbose=0).argmax(-1) == y).mean())
    assert model.evaluate(x, y, batch_size=5, verbose=0, return_dict=True) == {"loss": loss, "accuracy": accuracy}


def test_evaluate_with_loss_only_returns_a_scalar():
    x, y = tiny_classification(n=8)
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy")
    assert isinstance(model.evaluate(x, y, verbose=0), float)


class PlainSparseLoss(keras.losses.Loss):
    """A user's own loss: Keras picks the accuracy from the data's shapes, not from the loss."""

    def per_sample(self, y_true, y_pred):
        return keras.losses.SparseCategoricalCrossentropy().per_sample(y_true, y_pred)

    def check_labels(self, y_shape, output_shape):
        pass


@pytest.mark.parametrize(
    "loss, units, activation, labels, expected",
    [
        ("categorical_crossentropy", 3, "softmax", "one_hot", "categorical"),
        ("sparse_categorical_crossentropy", 3, "softmax", "sparse", "sparse"),
        ("sparse_categorical_crossentropy", 3, "softmax", "sparse_column", "sparse"),
        (PlainSparseLoss(), 3, "softmax", "sparse", "sparse"),
        ("binary_crossentropy", 1, "sigmoid", "binary", "binary"),
        ("mse", 1, None, "binary", "binary"),
        ("binary_crossentropy", 3, "sigmoid", "one_hot", "categorical"),  # TF 2.x: shapes decide, not the loss
    ],
)
def test_accuracy_resolves_as_keras(loss, units, activation, labels, expected):
    x, y = tiny_classification(n=30)
    y = {
        "one_hot": keras.utils.to_categorical(y, 3),
        "sparse": y,
        "sparse_column": y[:, None],
        "binary": (y > 0).astype(np.float32)[:, None],
    }[labels]
    model = tiny_dense_model(classes=units, activation=activation)
    model.compile("sgd", loss, metrics=["accuracy"])
    assert model.metrics_names == ["loss", "accuracy"]
    _, accuracy = model.evaluate(x, y, verbose=0)
    pred = model.predict(x, verbose=0)
    by_hand = {
        "categorical": lambda: pred.argmax(-1) == y.argmax(-1),
        "sparse": lambda: pred.argmax(-1) == y.reshape(-1),
        "binary": lambda: (pred > 0.5) == y,
    }[expected]()
    others = {
        "categorical": lambda: (pred > 0.5) == y,
        "sparse": lambda: (pred > 0.5) == y[..., None],
        "binary": lambda: pred.argmax(-1) == y.argmax(-1),
    }[expected]()
    assert accuracy == pytest.approx(by_hand.mean())
    assert accuracy != pytest.approx(others.mean())  # the data tells the choices apart


def softmax_and_logits_models(scale):
    """The same Dense weights twice: one model ends in softmax, the other outputs the logits."""
    rng = np.random.default_rng(5)
    weights = [scale * rng.normal(size=(4, 3)).astype(np.float32), np.zeros(3, np.float32)]
    models = []
    for activation, loss in (
        ("softmax", keras.losses.CategoricalCrossentropy()),
        (None, keras.losses.CategoricalCrossentropy(from_logits=True)),
    ):
        model = keras.Sequential([keras.layers.Dense(3, activation=activation, input_shape=(4,))])
        model.set_weights(weights)
        model.compile(keras.optimizers.SGD(0.1), loss)
        models.append(model)
    return models


@pytest.mark.parametrize("scale", [1.0, 40.0])  # 40: probabilities saturate far below Keras' clip epsilon
def test_softmax_output_uses_the_logits_like_from_logits(scale):
    x, y = tiny_classification(n=16)
    y = keras.utils.to_categorical(y, 3)
    softmax_model, logits_model = softmax_and_logits_models(scale)
    logits = x.astype(np.float64) @ logits_model.get_weights()[0].astype(np.float64)
    expected = -(y * numpy_log_softmax(logits)).sum(-1).mean()
    assert softmax_model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-4)
    assert logits_model.evaluate(x, y, verbose=0) == pytest.approx(expected, rel=1e-4)
    h1 = softmax_model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    h2 = logits_model.fit(x, y, batch_size=16, epochs=2, verbose=0, shuffle=False)
    np.testing.assert_allclose(h1.history["loss"], h2.history["loss"], rtol=1e-5)
    np.testing.assert_allclose(softmax_model.get_weights()[0], logits_model.get_weights()[0], rtol=1e-5, atol=1e-6)


def test_probabilities_not_from_a_softmax_use_keras_clipped_formula():
    probs = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5]], dtype=np.float32)
    labels = np.array([[1, 0, 0], [1, 0, 0]], dtype=np.float32)
    loss = keras.losses.CategoricalCrossentropy()(labels, Tensor(probs))
    expected = -np.log(np.clip(probs[:, 0].astype(np.float64), 1e-7, 1 - 1e-7)).mean()
    assert float(loss.data) == pytest.approx(expected, rel=1e-5)


def test_binary_crossentropy_from_sigmoid_equals_from_logits():
    logits = np.array([[3.0], [-2.0], [30.0]], dtype=np.float32)
    labels = np.array([[1.0], [1.0], [0.0]], dtype=np.float32)
    expected = np.mean(np.logaddexp(0, logits[:, 0].astype(np.float64)) - labels[:, 0] * logits[:, 0])
    from_logits = keras.losses.BinaryCrossentropy(from_logits=True)(labels, Tensor(logits))
    from_sigmoid = keras.losses.BinaryCrossentropy()(
        labels, keras.activations.sigmoid(Tensor(logits, requires_grad=True))
    )
    assert float(from_logits.data) == pytest.approx(expected, rel=1e-5)
    assert float(from_sigmoid.data) == pytest.approx(expected, rel=1e-5)


def test_weighted_metrics_are_named_as_keras_and_survive_save_and_load(tmp_path):
    x, y = tiny_classification()
    model = tiny_dense_model()
    model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"], weighted_metrics=["accuracy"])
    model.fit(x, y, sample_weight=np.linspace(0, 1, len(y)), epochs=1, verbose=0)
    assert model.metrics_names == ["loss", "accuracy", "weighted_accuracy"]
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert list(loaded.evaluate(x, y, verbose=0, return_dict=True)) == ["loss", "accuracy", "weighted_accuracy"]
    with pytest.raises(ValueError, match="two metrics with the same name: accuracy"):
        model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy", "accuracy"])
        model.evaluate(x, y, verbose=0)


def test_a_sample_weight_that_cannot_weigh_the_values_is_refused():
    with pytest.raises(ValueError, match=r"sample_weight of shape \(3,\) cannot weigh metric values of shape \(4,\)"):
        keras.metrics.Mean().update_state(np.ones(4), sample_weight=np.ones(3))


def test_a_loss_weighs_samples_alike_with_weights_of_shape_n_and_n_1():
    """Keras lines (n, 1) weights up with (n,) per-sample losses; they once broadcast to (n, n) silently."""
    labels = np.array([0, 1, 2, 1])
    probs = Tensor(np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1]], np.float32))
    weights = np.array([1.0, 0.0, 0.0, 2.0])
    loss = keras.losses.SparseCategoricalCrossentropy()
    expected = (-np.log(0.8) - 2 * np.log(0.4)) / 4
    assert float(loss(labels, probs, sample_weight=weights)) == pytest.approx(expected, rel=1e-6)
    assert float(loss(labels, probs, sample_weight=weights[:, None])) == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match=r"sample_weight of shape \(3,\) cannot weigh the per-sample losses"):
        loss(labels, probs, sample_weight=weights[:3])


def test_mse_and_mae_broadcast_labels_of_the_outputs_rank_against_it_as_keras_does():
    # Keras 2.6's mean_squared_error is mean(square(y_pred - y_true), axis=-1) on broadcast tensors: labels
    # (n, 4) against an output (n, 1) compare every label with the sample's one prediction
    # (graphcore/examples recompute_lstm.py trains this way)
    y_true = np.array([[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0]], np.float32)
    prediction = Tensor(np.array([[1.0], [2.0]], np.float32), requires_grad=True)
    loss = keras.losses.MeanSquaredError()(y_true, prediction)
    assert float(loss.data) == pytest.approx(((1 + 0 + 1 + 4) / 4 + 1) / 2)
    loss.backward()
    np.testing.assert_allclose(prediction.grad, [[2 * (1 - 1.5) / 2], [2 * 1 / 2]])  # summed over the labels
    assert float(keras.losses.MeanAbsoluteError()(y_true, prediction.data).data) == pytest.approx((1 + 1) / 2)
    keras.losses.MeanSquaredError().check_labels((2, 4), (None, 1))  # fits
    with pytest.raises(ValueError, match=r"labels of shape \(2, 4\) do not match the model's output shape \(None, 3\)"):
        keras.losses.MeanSquaredError().check_labels((2, 4), (None, 3))
    with pytest.raises(ValueError, match="labels of shape"):  # a cross-entropy does not broadcast
        keras.losses.BinaryCrossentropy().check_labels((2, 4), (None, 1))
