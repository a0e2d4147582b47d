"""Weights: get/set copies, save/load round trip in npz without pickle, clear errors on a mismatch."""

import os

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_cnn, tiny_dense_model

import ipu_teach.keras as keras


def test_get_weights_returns_copies():
    model = tiny_dense_model()
    weights = model.get_weights()
    weights[0][...] = 7.0
    assert not np.any(model.get_weights()[0] == 7.0)
    assert [w.shape for w in weights] == [(4, 8), (8,), (8, 3), (3,)]


def test_set_weights_copies_and_leaves_the_list_alone():
    model = tiny_dense_model()
    given = [np.full(w.shape, i, dtype=np.float32) for i, w in enumerate(model.get_weights())]
    kept = [w.copy() for w in given]
    model.set_weights(given)
    x, y = tiny_classification(n=8)
    model.compile("sgd", "sparse_categorical_crossentropy")
    model.fit(x, y, verbose=0)
    for a, b in zip(given, kept):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(model.get_weights()[0], kept[0])


def test_set_weights_rejects_wrong_count_or_shape_before_changing_anything():
    model = tiny_dense_model()
    before = model.get_weights()
    with pytest.raises(ValueError, match="has 4 weights, but 3 were given"):
        model.set_weights(before[:3])
    wrong = [np.zeros_like(w) for w in before[:-1]] + [np.zeros(5, np.float32)]
    with pytest.raises(ValueError, match=r"shape \(3,\).*shape \(5,\)"):
        model.set_weights(wrong)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_save_and_load_weights_round_trip_without_pickle(tmp_path):
    model = tiny_cnn()
    path = tmp_path / "weights.npz"
    model.save_weights(path)
    assert sorted(os.listdir(tmp_path)) == ["weights.npz"]  # the temporary file was renamed into place
    with np.load(path, allow_pickle=False) as data:
        assert len(data.files) == 1 + len(model.weights)
    keras.utils.set_random_seed(7)
    other = tiny_cnn()
    assert not np.array_equal(other.get_weights()[0], model.get_weights()[0])
    other.load_weights(path)
    for a, b in zip(other.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.float32


def test_save_weights_overwrites_atomically(tmp_path):
    model = tiny_dense_model()
    path = tmp_path / "w.npz"
    model.save_weights(path)
    model.set_weights([w + 1 for w in model.get_weights()])
    model.save_weights(path)
    fresh = tiny_dense_model()
    fresh.load_weights(path)
    np.testing.assert_array_equal(fresh.get_weights()[1], model.get_weights()[1])
    assert sorted(os.listdir(tmp_path)) == ["w.npz"]


def test_load_weights_on_a_different_architecture_is_a_clear_error_and_changes_nothing(tmp_path):
    path = tmp_path / "cnn.npz"
    tiny_cnn().save_weights(path)
    model = tiny_dense_model()
    before = model.get_weights()
    with pytest.raises(ValueError, match="architectures differ"):
        model.load_weights(path)
    wider = keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(4)])
    wider_before = wider.get_weights()
    tiny_dense_model().save_weights(path)
    with pytest.raises(ValueError, match=r"shape \(8, 4\).*shape \(8, 3\)"):
        wider.load_weights(path)
    for a, b in zip(before + wider_before, model.get_weights() + wider.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_load_weights_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.npz"):
        tiny_dense_model().load_weights(tmp_path / "missing.npz")
