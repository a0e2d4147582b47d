"""A weights file may come from someone else: load_weights refuses a wrong or damaged file with a
clear error naming it, and changes nothing."""

import contextlib
import io
import json
import tracemalloc
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
    refused(saved, "its metadata lists 2 weights but it holds arrays 'w0'")


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


# ----- declared sizes are checked before anything is read (issue 19) -----------------------------------


def npy_header(shape, descr="<f8") -> bytes:
    """The header of a ``.npy`` file holding an array of ``shape`` (its data not included)."""
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, {"descr": descr, "fortran_order": False, "shape": shape})
    return stream.getvalue()


def write_bomb(archive, entry, shape):
    """An honest ``.npy`` of zeros of ``shape``, compressed as it is written: megabytes of data, a few KiB on disk."""
    with archive.open(entry, "w", force_zip64=True) as member:
        member.write(npy_header(shape))
        zeros = bytes(2**20)
        for _ in range(np.prod(shape) * 8 // len(zeros)):
            member.write(zeros)


def weights_file(path, arrays, names=("dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0")):
    """A weights file whose entries are ``arrays``: {entry: ndarray, or a shape to write as a zip bomb}."""
    meta = {"model": "m", "names": list(names), "shapes": []}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__meta__.npy", npy_bytes(np.array(json.dumps(meta))))
        for entry, array in arrays.items():
            if isinstance(array, tuple):
                write_bomb(archive, f"{entry}.npy", array)
            else:
                archive.writestr(f"{entry}.npy", npy_bytes(array))
    return path


def npy_bytes(array) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array)
    return stream.getvalue()


def peak_bytes(action) -> int:
    """The most memory Python and numpy held at once while ``action()`` ran (it may raise)."""
    tracemalloc.start()
    try:
        with contextlib.suppress(Exception):
            action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_zip_bomb_is_refused_from_its_header_before_its_data_is_read(tmp_path):
    good = tiny_dense_model().get_weights()
    path = weights_file(tmp_path / "bomb.npz", {"w0": (2**23,), "w1": good[1], "w2": good[2], "w3": good[3]})
    assert path.stat().st_size < 2**17  # 64 MiB of zeros in a file of a few KiB
    message = refused(
        path,
        r"weight dense_\d+/kernel:0 has shape \(4, 8\) but dense/kernel:0 in .* has shape \(8388608,\)",
        ValueError,
    )
    assert "the architectures differ" in message
    assert peak_bytes(lambda: tiny_dense_model().load_weights(path)) < 2**20


def test_a_header_declaring_2_to_the_40_elements_is_refused_not_a_memory_error(tmp_path):
    path = tmp_path / "huge.npz"
    weights_file(path, dict(zip(["w0", "w1", "w2", "w3"], tiny_dense_model().get_weights())))
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("w4.npy", npy_header((2**40,)))
    message = refused(path, r"its entry 'w4.npy' declares 128 bytes but its header describes 8,796,093,022,336")
    assert r"shape (1099511627776,)" in message


@pytest.mark.parametrize("value, dtype", [(1 + 2j, "complex64"), ("1.5", "<U3"), (True, "bool")])
def test_weights_that_are_not_real_numbers_are_refused_before_reading(tmp_path, value, dtype):
    good = tiny_dense_model().get_weights()
    bad = np.full(good[1].shape, value)
    bad = bad.astype(dtype)
    path = weights_file(tmp_path / "odd.npz", {"w0": good[0], "w1": bad, "w2": good[2], "w3": good[3]})
    refused(path, rf"dense/bias:0 holds {np.dtype(dtype)} values, not real numbers")


def test_an_error_about_20000_unexpected_entries_lists_a_few(tmp_path):
    path = tmp_path / "many.npz"
    meta = {"model": "m", "names": ["dense/kernel:0"], "shapes": [[4, 8]]}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__meta__.npy", npy_bytes(np.array(json.dumps(meta))))
        entry = npy_bytes(np.zeros(1, np.float32))
        for i in range(20_000):
            archive.writestr(f"w{i}.npy", entry)
    message = refused(
        path, r"its metadata lists 1 weights but it holds arrays 'w0', 'w1', 'w2', 'w3', 'w4' and 19,995 more"
    )
    assert len(message) < 300


@pytest.mark.parametrize("make", ["fifo", "device"])
@pytest.mark.parametrize("load", ["load_weights", "load_model"])
def test_a_fifo_or_a_device_is_refused_without_reading(tmp_path, make, load, fifo):
    path = tmp_path / "weights.npz"
    if make == "fifo":
        fifo(path)  # opening it for reading the usual way would wait for a writer forever
    else:
        path.symlink_to("/dev/zero")
    message = r"it is (a FIFO \(named pipe\)|a device), not a regular file"
    if load == "load_weights":
        refused(path, message)
    else:
        load_refused(path, message)


def test_a_symlink_to_a_weights_file_loads(saved, tmp_path):
    link = tmp_path / "link.npz"
    link.symlink_to(saved)
    direct, linked = tiny_dense_model(), tiny_dense_model()
    direct.load_weights(saved)
    linked.load_weights(link)
    assert all(np.array_equal(a, b) for a, b in zip(direct.get_weights(), linked.get_weights()))


# ----- model files (load_model) -------------------------------------------------------------------------


@pytest.fixture
def model_entries(tmp_path):
    """The entries of a model file: an Adam model trained one step (so its optimizer has slots), saved."""
    model = tiny_dense_model()
    model.compile("adam", "categorical_crossentropy")
    model.fit(np.ones((4, 4), np.float32), np.eye(3, dtype=np.float32)[[0, 1, 2, 0]], verbose=0)
    model.save(tmp_path / "good.zip")
    with zipfile.ZipFile(tmp_path / "good.zip") as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def model_file(tmp_path, entries, **changes):
    """A model file of ``entries`` with ``changes`` ({entry: bytes, None to leave it out, or a function
    of the entry's JSON or arrays returning them changed})."""
    path = tmp_path / "crafted.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            change = changes.get(name.replace(".", "_"), data)
            if callable(change) and name.endswith(".json"):
                change = json.dumps(change(json.loads(data))).encode()
            elif callable(change):
                change = npz_of(change(dict(np.load(io.BytesIO(data)))))
            if change is not None:
                archive.writestr(name, change)
    return path


def npz_of(arrays) -> bytes:
    stream = io.BytesIO()
    np.savez(stream, **arrays)
    return stream.getvalue()


def changed(edit):
    """``edit(value)`` applied in place, the value returned: for ``model_file``'s changes."""

    def apply(value):
        edit(value)
        return value

    return apply


def load_refused(path, message):
    with pytest.raises(BadFileError, match=message) as raised:
        keras.models.load_model(path)
    assert str(path) in str(raised.value)
    return str(raised.value)


def layer_config(edit):
    return changed(lambda description: edit(description["model"]["layers"][1]))


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"config_json": b"{not json"}, r"it is not JSON \(Expecting property name"),
        (
            {"config_json": b"[" * 50_000 + b"]" * 50_000},
            "its JSON nests 50,000 levels deep, more than the 100 allowed",
        ),
        ({"model_weights_npz": None}, "it has no model.weights.npz"),
        ({"config_json": changed(lambda d: d["model"].pop("tensors"))}, r"its architecture is malformed \(KeyError"),
        (
            {"config_json": layer_config(lambda layer: layer.update(class_name="__class__"))},
            "unknown layer class '__class__'",
        ),
        (
            {
                "config_json": layer_config(
                    lambda layer: layer["config"].update(kernel_initializer={"initializer": "__class__", "config": {}})
                )
            },
            "unknown initializer class '__class__'",
        ),
        (
            {"config_json": changed(lambda d: d["compile"]["optimizer"].update(class_name="__class__"))},
            "unknown optimizer class '__class__'",
        ),
        (
            {"config_json": changed(lambda d: d["compile"].update(loss={"class_name": "__class__", "config": {}}))},
            "unknown loss class '__class__'",
        ),
        (
            {"config_json": changed(lambda d: d["model"]["tensors"][2].update(inputs=[-1]))},
            "tensor 2 refers to a layer or tensor that is not in the file before it",
        ),
        (
            {"config_json": changed(lambda d: d["model"]["tensors"][2].update(output=3))},
            "a tensor names output 3 of a layer without it",
        ),
        (
            {"config_json": changed(lambda d: d["model"]["tensors"][2].update(output="0"))},
            "a tensor names output 0 of a layer without it",
        ),
    ],
    ids=[
        "not JSON",
        "deep JSON",
        "no weights",
        "no tensors",
        "layer __class__",
        "initializer __class__",
        "optimizer __class__",
        "loss __class__",
        "negative index",
        "output of a one-output layer",
        "output not a number",
    ],
)
def test_a_damaged_or_crafted_model_file_is_refused_naming_it(tmp_path, model_entries, changes, message):
    load_refused(model_file(tmp_path, model_entries, **changes), message)


def test_a_truncated_model_file_is_refused_naming_it(tmp_path, model_entries):
    path = model_file(tmp_path, model_entries)
    path.write_bytes(path.read_bytes()[:-40])
    load_refused(path, r"it is truncated or corrupt \(BadZipFile")


def optimizer_state(**arrays):
    return changed(lambda state: state.update(arrays))


@pytest.mark.parametrize(
    "change, message",
    [
        (
            optimizer_state(iterations=np.array(-1)),
            r"its optimizer.npz/iterations is -1, not a step count \(0 or more\)",
        ),
        (optimizer_state(iterations=np.array(1.5)), "its optimizer.npz/iterations is missing or not an integer"),
        (
            optimizer_state(**{"slot0/w-1": np.zeros(3, np.float32)}),
            "holds 'slot0/w-1', which name no slot of its 4 weights",
        ),
        (
            optimizer_state(**{"slot0/w4": np.zeros(3, np.float32)}),
            "holds 'slot0/w4', which name no slot of its 4 weights",
        ),
        (
            optimizer_state(**{"slot0/w0": np.zeros(3, np.float32)}),
            r"optimizer.npz/slot0/w0 has shape \(3,\), not the shape \(4, 8\)",
        ),
        (
            optimizer_state(**{"slot0/w1": np.full(8, 1 + 1j)}),
            "optimizer.npz/slot0/w1 holds complex128 values, not floating-point",
        ),
        (
            optimizer_state(**{"slot2/w1": np.zeros(8, np.float32)}),
            r"it holds 3 slots for weight dense_\d+/bias:0, but Adam keeps 2",
        ),
    ],
    ids=[
        "iterations -1",
        "iterations 1.5",
        "weight -1",
        "weight 4 of 4",
        "wrong shape",
        "complex",
        "a third Adam slot",
    ],
)
def test_saved_optimizer_state_is_checked_at_load_naming_the_file_and_entry(tmp_path, model_entries, change, message):
    load_refused(model_file(tmp_path, model_entries, optimizer_npz=change), message)


@pytest.mark.parametrize("value, dtype", [(1 + 2j, "complex64"), ("1.5", "<U3")])
def test_model_weights_that_are_not_real_numbers_are_refused(tmp_path, model_entries, value, dtype):
    weights = changed(lambda arrays: arrays.update(w1=np.full(8, value).astype(dtype)))
    load_refused(
        model_file(tmp_path, model_entries, model_weights_npz=weights),
        rf"model.weights.npz/w1 holds {np.dtype(dtype)} values",
    )


def test_a_zip_bomb_as_model_weights_is_refused_before_it_is_decompressed(tmp_path, model_entries):
    path = model_file(tmp_path, model_entries, model_weights_npz=None)
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("model.weights.npz", "w", force_zip64=True) as entry, zipfile.ZipFile(entry, "w") as npz:
            write_bomb(npz, "w0.npy", (2**23,))  # 64 MiB of zeros, streamed: never in memory here either
    assert path.stat().st_size < 2**18
    message = r"its model.weights.npz declares 67,109,\d+ bytes, more than the [\d,]+ allowed"
    assert peak_bytes(lambda: load_refused(path, message)) < 2**21


def test_a_saved_model_still_loads_and_trains_on(tmp_path, model_entries):
    model = keras.models.load_model(model_file(tmp_path, model_entries))
    assert model.optimizer.iterations == 1 and len(model.optimizer._slots) == 8
    model.fit(np.ones((4, 4), np.float32), np.eye(3, dtype=np.float32)[[0, 1, 2, 0]], verbose=0)
    assert all(np.isfinite(w).all() for w in model.get_weights())
