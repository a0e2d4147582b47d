"""Callbacks: Keras' hook order, EarlyStopping, ModelCheckpoint and stopping on a NaN loss."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras


class Recorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            return lambda *args, **kwargs: self.calls.append((name,) + tuple(a for a in args if isinstance(a, int)))
        return super().__getattribute__(name)


def compiled():
    model = tiny_dense_model()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_hook_order_matches_keras():
    x, y = tiny_classification(n=8)
    recorder = Recorder()
    model = compiled()
    model.fit(x, y, batch_size=4, epochs=2, validation_data=(x[:4], y[:4]), verbose=0, callbacks=[recorder])
    validation = [("on_test_begin",), ("on_test_batch_begin", 0), ("on_test_batch_end", 0), ("on_test_end",)]

    def epoch(e):
        return (
            [
                ("on_epoch_begin", e),
                ("on_train_batch_begin", 0),
                ("on_train_batch_end", 0),
                ("on_train_batch_begin", 1),
                ("on_train_batch_end", 1),
            ]
            + validation
            + [("on_epoch_end", e)]
        )

    assert recorder.calls == [("on_train_begin",)] + epoch(0) + epoch(1) + [("on_train_end",)]
    assert recorder.model is model and recorder.params["epochs"] == 2 and recorder.params["steps"] == 2
    recorder.calls.clear()
    model.evaluate(x, y, batch_size=4, verbose=0, callbacks=[recorder])
    assert recorder.calls == [
        ("on_test_begin",),
        ("on_test_batch_begin", 0),
        ("on_test_batch_end", 0),
        ("on_test_batch_begin", 1),
        ("on_test_batch_end", 1),
        ("on_test_end",),
    ]
    recorder.calls.clear()
    model.predict(x, batch_size=8, verbose=0, callbacks=[recorder])
    assert recorder.calls == [
        ("on_predict_begin",),
        ("on_predict_batch_begin", 0),
        ("on_predict_batch_end", 0),
        ("on_predict_end",),
    ]


def test_epoch_end_logs_hold_train_and_validation_values():
    x, y = tiny_classification(n=8)
    seen = []
    compiled().fit(
        x,
        y,
        batch_size=4,
        epochs=1,
        validation_data=(x, y),
        verbose=0,
        callbacks=[keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(dict(logs)))],
    )
    assert sorted(seen[0]) == ["accuracy", "loss", "val_accuracy", "val_loss"]


class ScriptedLoss(keras.callbacks.Callback):
    """Overwrites the monitored value with a script, and snapshots the weights at each epoch end."""

    def __init__(self, values):
        super().__init__()
        self.values, self.snapshots = values, []

    def on_epoch_end(self, epoch, logs=None):
        logs["val_loss"] = self.values[epoch]
        self.snapshots.append(self.model.get_weights())


def test_early_stopping_patience_and_restore_best_weights():
    x, y = tiny_classification(n=8)
    model = compiled()
    script = ScriptedLoss([1.0, 0.5, 0.7, 0.6, 0.4, 0.3])
    stopper = keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True)
    history = model.fit(x, y, batch_size=4, epochs=6, verbose=0, callbacks=[script, stopper])
    assert history.epoch == [0, 1, 2, 3]  # best at epoch 1, then two epochs without improvement
    assert stopper.stopped_epoch == 3 and stopper.best == 0.5 and stopper.best_epoch == 1
    for restored, best in zip(model.get_weights(), script.snapshots[1]):
        np.testing.assert_array_equal(restored, best)
    assert not np.array_equal(model.get_weights()[0], script.snapshots[3][0])


def test_early_stopping_on_accuracy_maximises_and_min_delta_counts():
    x, y = tiny_classification(n=8)
    stopper = keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=1, min_delta=0.05)

    class Script(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_accuracy"] = [0.5, 0.6, 0.62, 0.9][epoch]

    history = compiled().fit(x, y, batch_size=8, epochs=4, verbose=0, callbacks=[Script(), stopper])
    assert stopper.mode == "max" and history.epoch == [0, 1, 2]


@pytest.mark.parametrize(
    ("make_callback", "warning", "logged"),
    [
        (
            lambda path: keras.callbacks.EarlyStopping(),
            "Early stopping conditioned on metric `val_loss` which is not available.",
            "loss,accuracy",
        ),
        (
            lambda path: keras.callbacks.ModelCheckpoint(str(path / "best.keras"), save_best_only=True),
            "Can save best model only with val_loss available, skipping.",
            "loss,accuracy",
        ),
        (
            lambda path: keras.callbacks.ReduceLROnPlateau(),
            "Learning rate reduction is conditioned on metric `val_loss` which is not available.",
            "loss,accuracy,lr",  # Keras' ReduceLROnPlateau logs the learning rate first
        ),
    ],
    ids=["EarlyStopping", "ModelCheckpoint", "ReduceLROnPlateau"],
)
def test_a_monitored_value_that_is_not_logged_warns_every_epoch_and_training_goes_on(
    tmp_path, capsys, make_callback, warning, logged
):
    """tf-keras' callbacks log Keras' warning each epoch and skip their work; fit trains on."""
    x, y = tiny_classification(n=8)
    model = compiled()
    learning_rate = model.optimizer.learning_rate
    history = model.fit(x, y, epochs=3, verbose=0, callbacks=[make_callback(tmp_path)])
    assert history.epoch == [0, 1, 2] and list(tmp_path.iterdir()) == []
    expected = f"WARNING:ipu_teach:{warning} Available metrics are: {logged}; pass validation data for 'val_*' values"
    assert capsys.readouterr().out.splitlines() == [expected] * 3
    assert model.optimizer.learning_rate == learning_rate


def test_model_checkpoint_save_best_only_with_filename_fields(tmp_path):
    x, y = tiny_classification(n=8)
    model = compiled()
    script = ScriptedLoss([1.0, 0.5, 0.7, 0.4])
    checkpoint = keras.callbacks.ModelCheckpoint(
        str(tmp_path / "ckpt-{epoch:02d}-{val_loss:.2f}.npz"), save_best_only=True, save_weights_only=True
    )
    model.fit(x, y, batch_size=4, epochs=4, verbose=0, callbacks=[script, checkpoint])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-01-1.00.npz", "ckpt-02-0.50.npz", "ckpt-04-0.40.npz"]
    restored = compiled()
    restored.load_weights(tmp_path / "ckpt-02-0.50.npz")
    for a, b in zip(restored.get_weights(), script.snapshots[1]):
        np.testing.assert_array_equal(a, b)
    with np.load(tmp_path / "ckpt-04-0.40.npz", allow_pickle=False) as data:
        assert len(data.files) == 1 + len(model.weights)


def test_model_checkpoint_every_epoch(tmp_path):
    x, y = tiny_classification(n=8)
    checkpoint = keras.callbacks.ModelCheckpoint(str(tmp_path / "w{epoch}.npz"), save_weights_only=True)
    compiled().fit(x, y, epochs=2, verbose=0, callbacks=[checkpoint])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w1.npz", "w2.npz"]


def _nan_model():
    model = compiled()
    model.set_weights([np.full_like(w, np.nan) if i == 0 else w for i, w in enumerate(model.get_weights())])
    return model


def test_nan_loss_does_not_stop_training_unless_asked(capsys):
    """Keras keeps training on a NaN loss; only TerminateOnNaN stops it."""
    x, y = tiny_classification(n=32)
    batches = []
    history = _nan_model().fit(
        x,
        y,
        batch_size=8,
        epochs=3,
        verbose=0,
        callbacks=[keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: batches.append(b))],
    )
    assert "Invalid loss" not in capsys.readouterr().out
    assert batches == [0, 1, 2, 3] * 3 and history.epoch == [0, 1, 2]


def test_terminate_on_nan_stops_at_the_first_nan_batch_with_keras_message(capsys):
    x, y = tiny_classification(n=32)
    batches = []
    history = _nan_model().fit(
        x,
        y,
        batch_size=8,
        epochs=3,
        verbose=0,
        callbacks=[
            keras.callbacks.TerminateOnNaN(),
            keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: batches.append(b)),
        ],
    )
    assert "Batch 0: Invalid loss, terminating training" in capsys.readouterr().out
    assert batches == [0] and history.epoch == [0] and np.isnan(history.history["loss"][0])


def test_terminate_on_nan_callback():
    callback = keras.callbacks.TerminateOnNaN()
    callback.set_model(compiled())
    callback.on_train_batch_end(3, {"loss": float("inf")})
    assert callback.model.stop_training


def test_model_checkpoint_unknown_field_names_the_fields(tmp_path):
    x, y = tiny_classification(n=8)
    checkpoint = keras.callbacks.ModelCheckpoint(str(tmp_path / "w-{val_loss:.2f}.npz"), save_weights_only=True)
    with pytest.raises(KeyError, match=r"'val_loss' is not in the logs; available: \['epoch', 'accuracy', 'loss'\]"):
        compiled().fit(x, y, epochs=1, verbose=0, callbacks=[checkpoint])


def test_fit_keeps_its_history_on_the_model():
    x, y = tiny_classification(n=8)
    model = compiled()
    history = model.fit(x, y, epochs=2, verbose=0)
    assert model.history is history and history.model is model and history.params["epochs"] == 2


def test_lambda_callback_functions_get_keras_arguments():
    x, y = tiny_classification(n=8)
    calls = []
    callback = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: calls.append(("train_begin", logs)),
        on_epoch_begin=lambda epoch, logs: calls.append(("epoch_begin", epoch, logs)),
        on_batch_begin=lambda batch, logs: calls.append(("batch_begin", batch, logs)),
        on_batch_end=lambda batch, logs: calls.append(("batch_end", batch, sorted(logs))),
        on_epoch_end=lambda epoch, logs: calls.append(("epoch_end", epoch, sorted(logs))),
        on_train_end=lambda logs: calls.append(("train_end", sorted(logs))),
    )
    compiled().fit(x, y, batch_size=8, epochs=1, verbose=0, callbacks=[callback])
    assert calls == [
        ("train_begin", {}),
        ("epoch_begin", 0, {}),
        ("batch_begin", 0, {}),
        ("batch_end", 0, ["accuracy", "loss"]),
        ("epoch_end", 0, ["accuracy", "loss"]),
        ("train_end", ["accuracy", "loss"]),
    ]
