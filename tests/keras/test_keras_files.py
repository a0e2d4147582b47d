"""Keras' own files in and out: ``.h5`` weights and models (Keras 2's HDF5 layout) and ``.keras`` files.

The files under golden/files/ were written by real tf-keras 2.21 (tools/make_keras_files.py, with Keras'
predictions); ipu-teach must load them and predict the same to float32 precision. The other way, the tool
loaded the files ipu-teach writes into real Keras and recorded what Keras predicted and the files' layout:
ipu-teach must still write that layout and predict what Keras predicted from its files.
"""

import builtins
import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
from keras_files_models import IPU_TEACH_MODELS, file_layout

import ipu_teach.keras as keras
from ipu_teach.validation import BadFileError

FILES = Path(__file__).resolve().parent / "golden" / "files"
KERAS_CASES = json.loads((FILES / "keras_files.json").read_text())["cases"]
IPU_TEACH_CASES = json.loads((FILES / "ipu_teach_files.json").read_text())["cases"]


def _inputs(values):
    arrays = [np.array(x, np.float32) for x in values]
    return arrays if len(arrays) > 1 else arrays[0]


def _close(actual, expected):
    np.testing.assert_allclose(actual, np.array(expected, np.float32), rtol=1e-5, atol=1e-6)


# ----- Keras' files into ipu-teach ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(KERAS_CASES))
@pytest.mark.parametrize("suffix", [".h5", ".keras"])
def test_a_model_saved_by_keras_predicts_as_keras_did(name, suffix):
    case = KERAS_CASES[name]
    model = keras.models.load_model(FILES / f"{name}{suffix}")
    assert [layer.name for layer in model.layers] == case["layer_names"]
    _close(model.predict(_inputs(case["x"]), verbose=0), case["prediction"])
    assert model.compiled and type(model.optimizer).__name__ == case["optimizer"]


@pytest.mark.parametrize("name", sorted(KERAS_CASES))
def test_an_h5_model_brings_its_optimizer_state_so_training_goes_on_as_in_keras(name):
    case = KERAS_CASES[name]
    model = keras.models.load_model(FILES / f"{name}.h5")
    assert model.optimizer.iterations == case["iterations"]
    assert len(model.optimizer._slots) == len(model.trainable_weights) * model.optimizer.slots_per_weight
    if "step" in case:  # Keras 2.6's optimizers, no dropout: Keras' next step from the same state
        model.train_on_batch(_inputs(case["step"]["x"]), np.array(case["step"]["y"]))
        _close(model.predict(_inputs(case["x"]), verbose=0), case["step"]["prediction_after"])


@pytest.mark.parametrize("name", sorted(KERAS_CASES))
@pytest.mark.parametrize("source", ["_weights.h5", ".keras"])
def test_weights_saved_by_keras_load_into_the_same_architecture(name, source):
    case = KERAS_CASES[name]
    model = keras.models.load_model(FILES / f"{name}.h5", compile=False)
    model.set_weights([np.zeros_like(w) for w in model.get_weights()])
    model.load_weights(FILES / f"{name}{source}")
    _close(model.predict(_inputs(case["x"]), verbose=0), case["prediction"])
    assert not model.compiled  # compile=False, as in Keras


@pytest.mark.parametrize("suffix", [".h5", ".keras"])
def test_a_lambda_layer_is_refused_never_run(suffix, monkeypatch):
    """Its Python code (marshal bytecode) is in the file: ipu-teach never runs it, whatever safe_mode says."""
    monkeypatch.setattr(builtins, "eval", None)  # nothing may be evaluated on the way to the refusal
    with pytest.raises(ValueError, match="Layer 'double' is a Lambda layer: its Python code is stored in the file"):
        keras.models.load_model(FILES / f"with_lambda{suffix}", safe_mode=False)


# ----- ipu-teach's files into Keras ---------------------------------------------------------------------
def _assert_same_layout(mine, keras_read):
    """The layout Keras read; an optimizer's config may have gained options since (with Keras' names)."""
    mine, keras_read = dict(mine), dict(keras_read)
    my_training, their_training = mine.pop("training_config", None), keras_read.pop("training_config", None)
    assert mine == keras_read
    if their_training is not None:
        my_optimizer, their_optimizer = my_training.pop("optimizer_config"), their_training.pop("optimizer_config")
        assert my_training == their_training and my_optimizer["class_name"] == their_optimizer["class_name"]
        assert their_optimizer["config"].items() <= my_optimizer["config"].items()


@pytest.mark.parametrize("name", sorted(IPU_TEACH_CASES))
def test_files_ipu_teach_writes_are_those_real_keras_loaded(name, tmp_path):
    case = IPU_TEACH_CASES[name]
    model, x, (step_x, step_y) = IPU_TEACH_MODELS[name](keras)
    model.save(tmp_path / "m.h5")
    model.save_weights(tmp_path / "w.h5")
    _assert_same_layout(file_layout(tmp_path / "m.h5"), case["layout"]["model"])
    _assert_same_layout(file_layout(tmp_path / "w.h5"), case["layout"]["weights"])
    prediction = model.predict(x, verbose=0)
    _close(prediction, case["prediction"])  # what Keras predicted from ipu-teach's model file
    _close(prediction, case["weights_file_prediction"])  # ... and from its weights file
    assert case["optimizer_module"].startswith("tf_keras.src.optimizers.legacy")  # Keras 2.6's, as ipu-teach's
    assert case["iterations"] == model.optimizer.iterations
    model.train_on_batch(step_x, step_y)  # Keras' step from the optimizer state it read from ipu-teach's file
    _close(model.predict(x, verbose=0), case["prediction_after_one_more_step"])


def test_an_h5_model_round_trip_keeps_weights_compile_arguments_and_optimizer_state(tmp_path):
    model, x, (step_x, step_y) = IPU_TEACH_MODELS["dense_bn"](keras)
    model.save(tmp_path / "m.h5")
    loaded = keras.models.load_model(tmp_path / "m.h5")
    assert loaded.get_config() == model.get_config()
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.metrics_names == model.metrics_names and loaded.optimizer.get_config() == model.optimizer.get_config()
    for m in (model, loaded):
        m.train_on_batch(step_x, step_y)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_model_never_trained_saves_no_optimizer_weights_as_keras(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.compile("adam", "mse")
    model.save(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5") as f:
        assert "optimizer_weights" not in f and "training_config" in f.attrs
    assert keras.models.load_model(tmp_path / "m.h5").optimizer.iterations == 0


def test_save_format_h5_picks_hdf5_whatever_the_name_and_other_names_keep_ipu_teachs_format(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.save_weights(tmp_path / "w.weights", save_format="h5")
    model.save(tmp_path / "m.hdf5")
    model.save(tmp_path / "m.keras")
    assert h5py.is_hdf5(tmp_path / "w.weights") and h5py.is_hdf5(tmp_path / "m.hdf5")
    assert not h5py.is_hdf5(tmp_path / "m.keras")
    model.load_weights(tmp_path / "w.weights")
    assert keras.models.load_model(tmp_path / "m.keras").count_params() == 8


def test_files_ipu_teach_wrote_under_an_h5_name_before_it_wrote_hdf5_still_load(tmp_path):
    """ipu-teach's own ``.npz`` weights and model zip, named ``.h5`` by a user of an earlier version."""
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.save(tmp_path / "old_model")
    model.save_weights(tmp_path / "old_weights")
    shutil.move(tmp_path / "old_model", tmp_path / "m.h5")
    shutil.move(tmp_path / "old_weights", tmp_path / "w.h5")
    assert keras.models.load_model(tmp_path / "m.h5").count_params() == 8
    model.load_weights(tmp_path / "w.h5")


# ----- loading by name, mismatches ----------------------------------------------------------------------
def _two_dense(first=3, names=("a", "b")):
    return keras.Sequential(
        [keras.layers.Dense(first, input_shape=(2,), name=names[0]), keras.layers.Dense(1, name=names[1])]
    )


def test_by_name_loads_the_layers_of_the_same_name_and_leaves_the_others(tmp_path):
    _two_dense().save_weights(tmp_path / "w.h5")
    other = keras.Sequential(
        [keras.layers.Dense(3, input_shape=(2,), name="a"), keras.layers.Dense(1, name="new_head")]
    )
    head_before = other.get_layer("new_head").get_weights()
    other.load_weights(tmp_path / "w.h5", by_name=True)
    with h5py.File(tmp_path / "w.h5") as f:
        np.testing.assert_array_equal(other.get_layer("a").kernel.data, f["a/a/kernel:0"][()])
    for before, after in zip(head_before, other.get_layer("new_head").get_weights()):
        np.testing.assert_array_equal(before, after)


def test_loading_by_order_into_another_architecture_gives_keras_errors_and_changes_nothing(tmp_path):
    _two_dense().save_weights(tmp_path / "w.h5")
    one = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    with pytest.raises(
        ValueError,
        match=r"^Layer count mismatch when loading weights from file. Model expected 1 layers, found 2 saved layers.$",
    ):
        one.load_weights(tmp_path / "w.h5")
    wider = _two_dense(first=4)
    before = wider.get_weights()
    with pytest.raises(
        ValueError,
        match=r"Shape mismatch in layer #0 \(named a in the current model, a in the save file\) for weight a/kernel:0. "
        r"Weight expects shape \(2, 4\). Received saved weight with shape \(2, 3\)",
    ):
        wider.load_weights(tmp_path / "w.h5")
    for old, new in zip(before, wider.get_weights()):
        np.testing.assert_array_equal(old, new)


def test_skip_mismatch_skips_with_keras_warning_and_loads_the_rest(tmp_path, capsys):
    _two_dense().save_weights(tmp_path / "w.h5")
    wider = _two_dense(first=4)
    with pytest.raises(ValueError, match="Shape mismatch in layer #0 \\(named a\\) for weight a/kernel:0"):
        wider.load_weights(tmp_path / "w.h5", by_name=True)
    wider.load_weights(tmp_path / "w.h5", by_name=True, skip_mismatch=True)
    assert (
        "WARNING:tensorflow:Skipping loading weights for layer #0 (named a) due to mismatch in shape for weight "
        "a/kernel:0. Weight expects shape (2, 4). Received saved weight with shape (2, 3)"
    ) in capsys.readouterr().out
    with h5py.File(tmp_path / "w.h5") as f:
        np.testing.assert_array_equal(wider.get_layer("a").bias.data, np.zeros(4))  # (3,) in the file: skipped
        np.testing.assert_array_equal(wider.get_layer("b").bias.data, f["b/b/bias:0"][()])
    with pytest.raises(ValueError, match="skip_mismatch can only be set to True when by_name is True"):
        wider.load_weights(tmp_path / "w.h5", skip_mismatch=True)


def test_by_name_needs_an_hdf5_file_as_in_keras(tmp_path):
    model = _two_dense()
    model.save_weights(tmp_path / "w.npz")
    with pytest.raises(NotImplementedError, match="got by_name=True to load_weights"):
        model.load_weights(tmp_path / "w.npz", by_name=True)


# ----- what is refused ---------------------------------------------------------------------------------
def test_without_h5py_the_error_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "h5py", None)
    model = _two_dense()
    with pytest.raises(ImportError, match=r"`save_weights` using h5 format requires h5py.*pip install h5py"):
        model.save_weights(tmp_path / "w.h5")
    assert not os.listdir(tmp_path)  # not even a temporary file


def test_a_file_named_h5_that_is_not_hdf5_is_refused_naming_it(tmp_path):
    (tmp_path / "w.h5").write_text("weights, honestly")
    with pytest.raises(BadFileError, match=r"w\.h5 is not a valid Keras HDF5 file: it is not an HDF5 file"):
        _two_dense().load_weights(tmp_path / "w.h5")
    with pytest.raises(BadFileError, match="it is not an HDF5 file"):
        keras.models.load_model(tmp_path / "w.h5")


def _weights_file(tmp_path, edit):
    model = _two_dense()
    model.save_weights(tmp_path / "w.h5")
    with h5py.File(tmp_path / "w.h5", "a") as f:
        edit(f)
    return model


def test_a_weight_linked_to_another_file_or_stored_outside_is_refused(tmp_path):
    """An HDF5 external link or external storage would read another file of the machine into a weight."""
    (tmp_path / "secret").write_bytes(np.arange(6, dtype=np.float32).tobytes())

    def external_link(f):
        del f["a/a/kernel:0"]
        f["a/a/kernel:0"] = h5py.ExternalLink(str(tmp_path / "other.h5"), "/x")

    def external_storage(f):
        del f["a/a/kernel:0"]
        f["a/a"].create_dataset("kernel:0", (2, 3), "<f4", external=[(str(tmp_path / "secret"), 0, 24)])

    for edit, problem in ((external_link, "is a link to elsewhere"), (external_storage, "keeps its values outside")):
        model = _weights_file(tmp_path, edit)
        before = model.get_weights()
        with pytest.raises(BadFileError, match=problem):
            model.load_weights(tmp_path / "w.h5")
        for old, new in zip(before, model.get_weights()):
            np.testing.assert_array_equal(old, new)


def test_complex_or_missing_weights_are_refused_before_anything_changes(tmp_path):
    def complex_kernel(f):
        del f["b/b/kernel:0"]
        f["b/b"].create_dataset("kernel:0", data=np.ones((3, 1), np.complex64))

    def missing(f):
        del f["b/b/bias:0"]

    for edit, problem in ((complex_kernel, "holds complex64 values, not real numbers"), (missing, "does not hold it")):
        model = _weights_file(tmp_path, edit)
        before = model.get_weights()
        with pytest.raises(BadFileError, match=problem):
            model.load_weights(tmp_path / "w.h5")
        for old, new in zip(before, model.get_weights()):  # layer a's weights were fine: still not loaded
            np.testing.assert_array_equal(old, new)


def test_a_keras_option_ipu_teach_does_not_simulate_is_refused_naming_layer_and_option(tmp_path):
    model = _two_dense()
    model.save(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5", "a") as f:
        config = json.loads(f.attrs["model_config"])
        config["config"]["layers"][1]["config"]["kernel_constraint"] = {"class_name": "MaxNorm", "config": {}}
        config["config"]["layers"][2]["config"]["bias_constraint"] = None  # Keras' "off": fine
        f.attrs["model_config"] = json.dumps(config)
    with pytest.raises(ValueError, match=r"Layer 'a' \(Dense\) in the file sets kernel_constraint=.*does not simulate"):
        keras.models.load_model(tmp_path / "m.h5")


def test_an_architecture_larger_than_the_weights_stored_is_refused_before_allocating(tmp_path):
    model = _two_dense()
    model.save(tmp_path / "m.h5")
    with h5py.File(tmp_path / "m.h5", "a") as f:
        config = json.loads(f.attrs["model_config"])
        config["config"]["layers"][1]["config"]["units"] = 100_000_000  # 800 MB of kernel for 2 x 1e8 values
        f.attrs["model_config"] = json.dumps(config)
    with pytest.raises(BadFileError, match=r"declares a weight a/kernel:0 of shape \(2, 100000000\)"):
        keras.models.load_model(tmp_path / "m.h5")


def test_an_h5_save_is_atomic(tmp_path, monkeypatch):
    from ipu_teach.keras.engine import hdf5_format

    model = _two_dense()
    model.save(tmp_path / "m.h5")
    before = (tmp_path / "m.h5").read_bytes()

    def fail(*args):
        raise RuntimeError("disk full")

    monkeypatch.setattr(hdf5_format, "write_weights", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        model.save(tmp_path / "m.h5")
    assert (tmp_path / "m.h5").read_bytes() == before and os.listdir(tmp_path) == ["m.h5"]
