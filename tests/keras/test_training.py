"""fit's arguments as Keras reads them: validation, shuffling, seeds, steps_per_epoch, initial_epoch."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_cnn, tiny_dense_model

import ipu_teach.keras as keras


def compiled(model=None, metrics=("accuracy",)):
    model = model or tiny_dense_model()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=list(metrics))
    return model


def test_validation_data_adds_val_logs_equal_to_evaluate():
    x, y = tiny_classification(n=40)
    xv, yv = tiny_classification(n=13, seed=9)
    model = compiled()
    history = model.fit(x, y, batch_size=8, epochs=2, validation_data=(xv, yv), verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.epoch == [0, 1] and all(len(v) == 2 for v in history.history.values())
    val_loss, val_accuracy = model.evaluate(xv, yv, verbose=0)
    assert history.history["val_loss"][-1] == pytest.approx(val_loss, rel=1e-6)
    assert history.history["val_accuracy"][-1] == pytest.approx(val_accuracy)


def test_validation_split_takes_the_last_fraction_before_shuffling():
    x, y = tiny_classification(n=40)
    model_a, model_b = compiled(), None
    weights = model_a.get_weights()
    history = model_a.fit(x, y, batch_size=8, epochs=1, validation_split=0.25, verbose=0)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    model_b = compiled()
    model_b.set_weights(weights)
    reference = model_b.fit(x[:30], y[:30], batch_size=8, epochs=1, validation_data=(x[30:], y[30:]), verbose=0)
    assert history.history == reference.history
    x_copy = x.copy()
    model_b.fit(x, y, batch_size=8, epochs=1, validation_split=0.25, verbose=0)
    np.testing.assert_array_equal(x, x_copy)


def test_shuffle_false_is_reproducible_and_order_dependent():
    x, y = tiny_classification(n=40)
    start = compiled().get_weights()

    def run(shuffle, seed):
        keras.utils.set_random_seed(seed)
        model = compiled()
        model.set_weights(start)
        model.fit(x, y, batch_size=8, epochs=2, shuffle=shuffle, verbose=0)
        return model.get_weights()

    for a, b in zip(run(False, 1), run(False, 2)):
        np.testing.assert_array_equal(a, b)
    assert not all(np.array_equal(a, b) for a, b in zip(run(True, 1), run(True, 2)))


def test_set_random_seed_reproduces_initial_weights_dropout_and_shuffling():
    x = np.random.default_rng(0).normal(size=(24, 8, 8, 1)).astype(np.float32)
    y = np.arange(24) % 3

    def run():
        keras.backend.clear_session()
        keras.utils.set_random_seed(42)
        model = compiled(tiny_cnn(dropout=0.5))
        model.fit(x, y, batch_size=8, epochs=2, verbose=0)
        return model.get_weights()

    first, second = run(), run()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    keras.utils.set_random_seed(43)
    assert not np.array_equal(compiled(tiny_cnn(dropout=0.5)).get_weights()[0], first[0])


def test_steps_per_epoch_limits_the_batches():
    x, y = tiny_classification(n=40)
    model = compiled()
    batches = []
    model.fit(
        x,
        y,
        batch_size=5,
        epochs=2,
        steps_per_epoch=3,
        verbose=0,
        callbacks=[keras.callbacks.LambdaCallback(on_batch_end=lambda b, logs: batches.append(b))],
    )
    assert batches == [0, 1, 2, 0, 1, 2] and model.optimizer.iterations == 6


def test_initial_epoch_starts_counting_there(capsys):
    x, y = tiny_classification(n=16)
    model = compiled()
    history = model.fit(x, y, batch_size=8, epochs=3, initial_epoch=1, verbose=1)
    out = capsys.readouterr().out
    assert history.epoch == [1, 2] and "Epoch 1/3" not in out
    assert "Epoch 2/3" in out and "Epoch 3/3" in out


def test_training_learns_a_separable_problem():
    x, y = tiny_classification(n=200)
    model = compiled()
    history = model.fit(x, y, batch_size=16, epochs=15, verbose=0)
    assert history.history["loss"][-1] < 0.6 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8


def test_predict_returns_one_row_per_sample_in_order():
    x, _ = tiny_classification(n=11)
    model = tiny_dense_model()
    whole = model.predict(x, batch_size=4, verbose=0)
    assert whole.shape == (11, 3) and whole.dtype == np.float32
    np.testing.assert_allclose(whole[5], model.predict(x[5:6], verbose=0)[0], rtol=1e-6)
    np.testing.assert_allclose(whole.sum(-1), 1.0, rtol=1e-5)


def test_uncompiled_model_cannot_fit():
    x, y = tiny_classification(n=8)
    with pytest.raises(RuntimeError, match="compile"):
        tiny_dense_model().fit(x, y, verbose=0)
