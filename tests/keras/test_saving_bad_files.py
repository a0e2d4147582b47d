"""A weights file may come from someone else: load_weights refuses a wrong or damaged file with a
clear error naming it, and changes nothing."""

import json
import zipfile

import numpy as np
import pytest
from keras_helpers import tiny_dense_model

import ipu_teach.keras as keras
from ipu_teach.validation import BadFileError


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "weights.npz"
    tiny_dense_model().save_weights(path)
    return path


def refused(path, message, error=BadFileError):
    model = tiny_dense_model()
    before = model.get_weights()
    with pytest.raises(error, match=message) as raised:
        model.load_weights(path)
    assert str(path) in str(raised.value)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    return str(raised.value)


def test_a_truncated_file_is_named_not_a_bare_bad_zip_file(saved):
    saved.write_bytes(saved.read_bytes()[:300])
    message = refused(saved, r"is not a valid weights file: it is truncated or corrupt \(BadZipFile")
    assert "save it again" in message


def test_a_text_file_gets_no_allow_pickle_hint(saved):
    saved.write_text("these are not weights\n")
    assert "allow_pickle" not in refused(saved, "is not a valid weights file: it is not an .npz archive")


def test_a_single_npy_array_is_refused(saved):
    with open(saved, "wb") as stream:
        np.save(stream, np.zeros(3))
    refused(saved, r"it is a single array \(.npy\)")


def test_an_npz_without_metadata_is_refused(saved):
    np.savez(saved, w0=np.zeros(3))
    refused(saved, r"its metadata \(__meta__\) is missing or unreadable")


def test_metadata_listing_arrays_that_are_not_there_is_refused(saved):
    meta = {"model": "m", "names": ["dense/kernel:0", "dense/bias:0"], "shapes": [[4, 8], [8]]}
    np.savez(saved, __meta__=np.array(json.dumps(meta)), w0=np.zeros((4, 8), np.float32))
    refused(saved, "its metadata lists 2 weights but it holds arrays w0")


def test_saved_weight_names_are_compared_with_the_models(tmp_path):
    path = tmp_path / "swapped.npz"
    keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(3)]).save_weights(path)
    data = dict(np.load(path))
    meta = json.loads(str(data["__meta__"]))
    meta["names"][0] = "conv2d/kernel:0"
    np.savez(path, **{**data, "__meta__": np.array(json.dumps(meta))})
    message = refused(path, "would get the file's conv2d/kernel:0", ValueError)
    assert "architectures differ" in message


def test_layer_numbers_of_another_session_still_load(tmp_path):
    path = tmp_path / "w.npz"
    first = tiny_dense_model()
    first.save_weights(path)
    later = tiny_dense_model()  # same session: its layers are numbered dense_2, dense_3
    assert later.weights[0].name != first.weights[0].name
    later.load_weights(path)
    assert all(np.array_equal(a, b) for a, b in zip(first.get_weights(), later.get_weights()))


def test_a_zip_that_is_not_numpy_is_refused(saved):
    with zipfile.ZipFile(saved, "w") as archive:
        archive.writestr("readme.txt", "hello")
    refused(saved, "is not a valid weights file")
