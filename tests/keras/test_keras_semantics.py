"""Keras behaviours users rely on: stop flags per loop, frozen layers, BatchNormalization frozen,
empty inputs, NaN handling by callbacks, and the learning-rate and CSV callbacks."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras


def compiled(lr=0.1, **kwargs):
    model = tiny_dense_model()
    model.compile(keras.optimizers.SGD(lr), "sparse_categorical_crossentropy", metrics=["accuracy"], **kwargs)
    return model


def test_evaluate_after_early_stopping_runs_every_batch():
    x, y = tiny_classification(n=40)
    model = compiled()
    stop = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: setattr(model, "stop_training", True))
    model.fit(x, y, batch_size=8, epochs=3, verbose=0, callbacks=[stop])
    assert model.stop_training
    seen = []
    count = keras.callbacks.LambdaCallback()
    count.on_test_batch_end = lambda batch, logs=None: seen.append(batch)
    loss = model.evaluate(x, y, batch_size=8, verbose=0, callbacks=[count])
    assert seen == [0, 1, 2, 3, 4]
    full = model.evaluate(x, y, batch_size=40, verbose=0)
    assert loss == pytest.approx(full, rel=1e-5)


def test_a_frozen_layer_collects_no_gradient_and_unfreezing_applies_only_new_ones():
    x, y = tiny_classification(n=32)
    model = compiled()
    first = model.layers[1]
    first.trainable = False
    frozen = first.get_weights()
    model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(frozen, first.get_weights()))
    assert all(w.grad is None for w in first.weights)
    first.trainable = True
    before = model.get_weights()
    _, grads, _ = model.compute_gradients(x[:8], y[:8])
    model.set_weights(before)
    model.train_on_batch(x[:8], y[:8])
    for w0, g, w1 in zip(before, grads, model.get_weights()):
        np.testing.assert_allclose(w1, w0 - 0.1 * g, rtol=1e-5, atol=1e-7)  # one step's gradient, no backlog


def test_freezing_a_model_freezes_its_layers():
    model = compiled()
    model.trainable = False
    assert model.trainable_weights == [] and not any(layer.trainable for layer in model.layers)


def _bn_model():
    inputs = keras.Input(shape=(4,))
    norm = keras.layers.BatchNormalization()
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(norm(inputs)))
    model.compile("sgd", "sparse_categorical_crossentropy")
    return model, norm


def test_frozen_batch_normalization_runs_in_inference_and_keeps_its_statistics():
    x, y = tiny_classification(n=32)
    x = x * 3 + 2
    model, norm = _bn_model()
    norm.trainable = False
    stats = norm.get_weights()
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(stats, norm.get_weights()))
    out = norm(x, training=True).data
    gamma, beta, mean, var = stats
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3) * gamma + beta, rtol=1e-5)


@pytest.mark.parametrize(
    "what, call",
    [
        ("fit", lambda m, x, y: m.fit(x, y, verbose=0)),
        ("evaluate", lambda m, x, y: m.evaluate(x, y, verbose=0)),
    ],
)
def test_empty_inputs_raise_keras_errors(what, call):
    x, y = tiny_classification(n=8)
    function = {"fit": "train_function", "evaluate": "test_function"}[what]
    with pytest.raises(
        ValueError, match=rf"Unexpected result of `{function}` \(Empty logs\): {what} was given no data"
    ):
        call(compiled(), x[:0], y[:0])


def test_empty_predict_raises_keras_error():
    x, _ = tiny_classification(n=8)
    with pytest.raises(ValueError, match=r"Unexpected result of `predict_function` \(Empty batch_outputs\)"):
        compiled().predict(x[:0], verbose=0)


def test_learning_rate_scheduler_sets_and_logs_the_rate(capsys):
    x, y = tiny_classification(n=16)
    model = compiled()
    history = model.fit(
        x,
        y,
        epochs=3,
        verbose=0,
        callbacks=[keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.5 / (epoch + 1), verbose=1)],
    )
    assert history.history["lr"] == pytest.approx([0.5, 0.25, 0.5 / 3])
    assert "Epoch 00002: LearningRateScheduler setting learning rate to 0.25." in capsys.readouterr().out


def test_reduce_lr_on_plateau_cuts_after_patience():
    model = compiled(lr=1.0)
    callback = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=2, min_lr=0.3)
    callback.set_model(model)
    callback.on_train_begin()
    rates = []
    for epoch, loss in enumerate([1.0, 1.0, 1.0, 1.0, 1.0, 1.0]):
        callback.on_epoch_end(epoch, {"loss": loss})
        rates.append(model.optimizer.learning_rate)
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.3, 0.3]


def test_csv_logger_writes_one_row_per_epoch_and_appends(tmp_path):
    x, y = tiny_classification(n=16)
    path = tmp_path / "log.csv"
    model = compiled()
    history = model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.CSVLogger(path)])
    rows = path.read_bytes().decode().split("\r\n")
    assert rows[0] == "epoch,accuracy,loss" and rows[3] == ""
    assert rows[2] == f"1,{history.history['accuracy'][1]},{history.history['loss'][1]}"
    model.fit(x, y, epochs=1, verbose=0, callbacks=[keras.callbacks.CSVLogger(path, append=True)])
    assert path.read_bytes().decode().count("\r\n") == 4 and path.read_text().startswith("epoch,")


def test_model_checkpoint_saves_the_whole_model(tmp_path):
    x, y = tiny_classification(n=16)
    model = compiled()
    model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.ModelCheckpoint(str(tmp_path / "m-{epoch}.keras"))])
    loaded = keras.models.load_model(tmp_path / "m-2.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
