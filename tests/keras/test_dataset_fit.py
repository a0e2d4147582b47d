"""ipu_teach.data.Dataset as input to fit, evaluate and predict, with tf.data's rules."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras
from ipu_teach.data import Dataset


def compiled():
    model = tiny_dense_model()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def test_dataset_training_equals_arrays_training():
    x, y = tiny_classification(n=20)
    by_arrays, by_dataset = compiled(), compiled()
    by_dataset.set_weights(by_arrays.get_weights())
    h1 = by_arrays.fit(x, y, batch_size=6, epochs=2, shuffle=False, verbose=0)
    h2 = by_dataset.fit(Dataset.from_tensor_slices((x, y)).batch(6), epochs=2, verbose=0)
    assert sorted(h1.history) == sorted(h2.history)
    for key in h1.history:
        np.testing.assert_allclose(h1.history[key], h2.history[key], rtol=1e-6)
    for a, b in zip(by_arrays.get_weights(), by_dataset.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert by_dataset.evaluate(Dataset.from_tensor_slices((x, y)).batch(7), verbose=0) == pytest.approx(
        by_arrays.evaluate(x, y, verbose=0)
    )
    np.testing.assert_allclose(
        by_dataset.predict(Dataset.from_tensor_slices(x).batch(7), verbose=0),
        by_arrays.predict(x, verbose=0),
        rtol=1e-6,
    )


def test_dataset_validation_data_and_map():
    x, y = tiny_classification(n=16)
    train = Dataset.from_tensor_slices((x, y)).shuffle(16, seed=1).map(lambda a, b: (a * 2, b)).batch(4)
    history = compiled().fit(train, epochs=1, validation_data=Dataset.from_tensor_slices((x, y)).batch(8), verbose=0)
    assert "val_loss" in history.history


def test_infinite_dataset_needs_steps_per_epoch():
    x, y = tiny_classification(n=16)
    forever = Dataset.from_tensor_slices((x, y)).batch(4).repeat()
    model = compiled()
    with pytest.raises(ValueError, match="steps_per_epoch"):
        model.fit(forever, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="`steps`"):
        model.evaluate(forever, verbose=0)
    history = model.fit(forever, epochs=2, steps_per_epoch=3, verbose=0)
    assert model.optimizer.iterations == 6 and history.epoch == [0, 1]


def test_batch_size_with_a_dataset_is_ignored_as_keras_2_6_does():
    """Keras 2.6's DatasetAdapter takes the Dataset's own batches whatever batch_size says (tf-keras too:
    golden/batching_behaviours.json)."""
    x, y = tiny_classification(n=8)
    model = compiled()
    history = model.fit(Dataset.from_tensor_slices((x, y)).batch(4), batch_size=3, verbose=0)
    assert model.optimizer.iterations == 2 and len(history.history["loss"]) == 1
    assert len(model.evaluate(Dataset.from_tensor_slices((x, y)).batch(4), batch_size=3, verbose=0)) == 2
    assert model.predict(Dataset.from_tensor_slices(x).batch(4), batch_size=3, verbose=0).shape == (8, 3)


def test_y_with_a_dataset_is_an_error():
    x, y = tiny_classification(n=8)
    with pytest.raises(ValueError, match="`y` must not be given"):
        compiled().fit(Dataset.from_tensor_slices(x).batch(4), y, verbose=0)


def test_dataset_arrays_are_not_modified():
    x, y = tiny_classification(n=12)
    x_copy, y_copy = x.copy(), y.copy()
    model = compiled()
    dataset = Dataset.from_tensor_slices((x, y)).batch(5)
    model.fit(dataset, epochs=2, verbose=0)
    model.evaluate(dataset, verbose=0)
    model.predict(dataset, verbose=0)
    np.testing.assert_array_equal(x, x_copy)
    np.testing.assert_array_equal(y, y_copy)


def test_dataset_of_wrong_shape_is_caught_before_training():
    x, y = tiny_classification(n=8)
    model = compiled()
    with pytest.raises(ValueError, match=r"expected shape=\(None, 4\), found shape=\(4, 3\)"):
        model.fit(Dataset.from_tensor_slices((x[:, :3], y)).batch(4), verbose=0)
    assert model.optimizer.iterations == 0


def test_steps_per_epoch_equal_to_dataset_length_restarts_it_each_epoch():
    x, y = tiny_classification(n=20)
    model = compiled()
    history = model.fit(Dataset.from_tensor_slices((x, y)).batch(4), epochs=3, steps_per_epoch=5, verbose=0)
    assert history.epoch == [0, 1, 2] and model.optimizer.iterations == 15


def test_steps_per_epoch_shorter_than_dataset_continues_across_epochs_then_warns():
    x, y = tiny_classification(n=20)
    model = compiled()
    seen = []
    record = keras.callbacks.LambdaCallback(on_batch_begin=lambda b, logs: seen.append(b))
    with pytest.warns(UserWarning, match="ran out of data"):
        history = model.fit(
            Dataset.from_tensor_slices((x, y)).batch(4), epochs=4, steps_per_epoch=2, verbose=0, callbacks=[record]
        )
    assert model.optimizer.iterations == 5  # 2 + 2 + the one batch left of 5
    assert seen == [0, 1, 0, 1, 0]
    assert history.epoch == [0, 1, 2]  # the cut-short epoch still ends; the fourth never starts


def test_validation_split_with_a_dataset_is_an_error():
    x, y = tiny_classification(n=8)
    with pytest.raises(ValueError, match="validation_split.*validation_data"):
        compiled().fit(Dataset.from_tensor_slices((x, y)).batch(4), validation_split=0.5, verbose=0)
