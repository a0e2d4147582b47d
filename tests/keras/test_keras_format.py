"""``model.save("m.keras")`` writes Keras 2.13+'s ``.keras`` zip, and the optimizer state such files hold is read.

golden/files/keras_format.json was made by tools/make_keras_files.py (section keras_format) with real tf-keras
2.21: the files ipu-teach wrote for the models of keras_files_models.KERAS_FORMAT_MODELS, loaded by Keras (its
predictions) and saved again by Keras (the layout ipu-teach's must have); and newer_*.keras, models Keras trained
with its newer optimizers, whose state (``optimizer/vars``) ipu-teach must read to continue as Keras did.
"""

import io
import json
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from keras_files_models import KERAS_FORMAT_MODELS, keras_zip_layout, nested

import ipu_teach.keras as keras
from ipu_teach.keras.engine import keras_config
from ipu_teach.keras.engine.keras_zip import variable_groups

FILES = Path(__file__).resolve().parent / "golden" / "files"
CASES = json.loads((FILES / "keras_format.json").read_text())


def _close(actual, expected):
    np.testing.assert_allclose(actual, np.array(expected, np.float32), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES["ipu_teach_to_keras"]))
def test_a_keras_file_ipu_teach_writes_is_laid_out_as_keras_writes_it_and_keras_predicts_the_same(name, tmp_path):
    case = CASES["ipu_teach_to_keras"][name]
    model, x, (step_x, step_y) = KERAS_FORMAT_MODELS[name](keras)
    model.save(tmp_path / "m.keras")
    mine, theirs = keras_zip_layout(tmp_path / "m.keras", leave_out=("optimizer",)), case["keras_layout"]
    assert mine["entries"] == theirs["entries"]  # metadata.json, config.json, model.weights.h5, stored
    assert mine["weights"] == theirs["weights"]  # every group and dataset, shapes and dtypes
    # each object by a class and module Keras imports (tf-keras writes its own package, tf_keras, for its models)
    theirs_classes = {(name, module.removeprefix("tf_"), registered) for name, module, registered in theirs["classes"]}
    assert {tuple(c) for c in mine["classes"]} <= theirs_classes
    assert [layer.name for layer in model.layers] == case["layer_names"]
    _close(model.predict(x, verbose=0), case["prediction"])  # what Keras predicted from ipu-teach's file
    _close(model.evaluate(step_x, step_y, verbose=0), case["evaluate"])  # ... and its loss and metrics
    assert model.metrics_names == case["metrics_names"]
    assert case["optimizer_module"].startswith("tf_keras.src.optimizers.legacy")  # Keras 2.6's, as ipu-teach's
    assert case["iterations"] == 0  # Keras keeps no state for its legacy optimizers, and reads none


@pytest.mark.parametrize("name", sorted(CASES["ipu_teach_to_keras"]))
def test_a_keras_file_round_trip_keeps_weights_compile_arguments_and_optimizer_state(name, tmp_path):
    model, x, (step_x, step_y) = KERAS_FORMAT_MODELS[name](keras)
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.optimizer.get_config() == model.optimizer.get_config()
    assert loaded.optimizer.iterations == model.optimizer.iterations > 0
    assert type(loaded.loss) is type(model.loss) and vars(loaded.loss) == vars(model.loss)
    for m in (model, loaded):
        m.train_on_batch(step_x, step_y)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("name", sorted(CASES["keras_to_ipu_teach"]))
def test_a_keras_file_of_a_newer_optimizer_brings_its_state_so_training_goes_on_as_in_keras(name):
    case = CASES["keras_to_ipu_teach"][name]
    model = keras.models.load_model(FILES / f"{name}.keras")
    x = np.array(case["x"], np.float32)
    _close(model.predict(x, verbose=0), case["prediction"])
    assert model.optimizer.iterations == case["iterations"] == 4
    model.train_on_batch(np.array(case["step"]["x"], np.float32), np.array(case["step"]["y"], np.float32))
    _close(model.predict(x, verbose=0), case["prediction_after"])


def test_without_the_state_the_next_step_would_differ_from_keras():
    """The check above can fail: a fresh optimizer (Adam's first step is lr-sized) lands elsewhere."""
    case = CASES["keras_to_ipu_teach"]["newer_adam"]
    model = keras.models.load_model(FILES / "newer_adam.keras")
    model.compile(keras.optimizers.Adam(0.05), "mse")
    model.train_on_batch(np.array(case["step"]["x"], np.float32), np.array(case["step"]["y"], np.float32))
    after = model.predict(np.array(case["x"], np.float32), verbose=0)
    assert np.abs(after - np.array(case["prediction_after"])).max() > 1e-3


def _rewritten(source, target, edit):
    """``source`` with its ``model.weights.h5`` changed by ``edit(h5py.File)``."""
    with zipfile.ZipFile(source) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    buffer = io.BytesIO(entries["model.weights.h5"])
    with h5py.File(buffer, "r+") as f:
        edit(f)
    entries["model.weights.h5"] = buffer.getvalue()
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return target


def test_optimizer_state_that_does_not_fit_is_skipped_with_keras_warning(tmp_path, capsys):
    def drop_last(f):
        group = f["optimizer/vars"]
        del group[str(len(group) - 1)]

    path = _rewritten(FILES / "newer_adam.keras", tmp_path / "short.keras", drop_last)
    model = keras.models.load_model(path)
    assert model.optimizer.iterations == 0 and not model.optimizer._slots
    assert (
        "WARNING:tensorflow:Skipping variable loading for optimizer 'Adam', because it has 17 variables whereas "
        "the saved optimizer has 16 variables." in capsys.readouterr().out
    )


def test_a_layer_whose_variables_are_missing_is_refused_naming_it(tmp_path):
    path = _rewritten(
        FILES / "newer_sgd.keras", tmp_path / "cut.keras", lambda f: f.__delitem__("layers/dense_1/vars/1")
    )
    with pytest.raises(ValueError, match=r"Layer 'dense_\d+' expected 2 variables, but received 1 variables"):
        keras.models.load_model(path)


def test_the_groups_of_a_bidirectional_layer_are_its_cells_as_in_keras():
    model, _, _ = KERAS_FORMAT_MODELS["recurrent"](keras)
    groups = {path: [w.name for w in weights] for path, _, weights in variable_groups(model) if weights}
    both_ways = model.get_layer("both_ways")
    assert groups["layers/bidirectional/forward_layer/cell/vars"] == [
        w.name for w in both_ways.forward_layer.trainable_weights
    ]
    assert groups["layers/bidirectional/backward_layer/cell/vars"] == [
        w.name for w in both_ways.backward_layer.trainable_weights
    ]


def test_save_format_keras_picks_the_keras_zip_whatever_the_name_and_other_names_keep_ipu_teachs(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.save(tmp_path / "m.model", save_format="keras")
    model.save(tmp_path / "m.zip")
    with zipfile.ZipFile(tmp_path / "m.model") as archive:
        assert archive.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        assert json.loads(archive.read("metadata.json"))["keras_version"] == "2.13.1"
    with zipfile.ZipFile(tmp_path / "m.zip") as archive:
        assert "model.weights.npz" in archive.namelist()
    assert keras.models.load_model(tmp_path / "m.model").count_params() == 8


@pytest.mark.parametrize("suffix", [".h5", ".keras", ".zip"])
def test_metric_objects_given_to_compile_are_saved_by_class_and_configuration(suffix, tmp_path):
    """As Keras' files keep them (``{"class_name": "AUC", "config": {...}}``): tf-keras 2.21 loads ipu-teach's
    ``.h5`` and ``.keras`` of this model and evaluates the same numbers; ipu-teach used to refuse to save it."""
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(4,))])
    metrics = [keras.metrics.AUC(num_thresholds=50), keras.metrics.TopKCategoricalAccuracy(k=2)]
    model.compile("adam", "categorical_crossentropy", metrics=["accuracy", *metrics, keras.metrics.Precision(0.3)])
    x = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1, 2, 0, 1]]
    model.fit(x, y, verbose=0)
    model.save(tmp_path / f"m{suffix}")
    loaded = keras.models.load_model(tmp_path / f"m{suffix}")
    kept = [m for m in loaded.compiled_outputs._given[2] if not isinstance(m, str)]
    assert [(type(m).__name__, m.get_config()) for m in kept] == [
        ("AUC", metrics[0].get_config()),
        ("TopKCategoricalAccuracy", {"name": "top_k_categorical_accuracy", "dtype": "float32", "k": 2}),
        ("Precision", {"name": "precision", "thresholds": 0.3, "top_k": None, "class_id": None}),
    ]
    assert loaded.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)


@pytest.mark.parametrize("case", sorted(CASES["newer_optimizer_layouts"]))
def test_optimizer_variables_are_read_in_the_order_keras_newer_optimizers_save_them(case, tmp_path):
    """The shapes tf-keras' ``optimizer/vars`` held in order (Dense(2) then Dense(1) on 3 features, one step) are
    those ipu-teach writes and reads for the same optimizer: the step count, then each slot where Keras puts it."""
    layout = CASES["newer_optimizer_layouts"][case]
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,)), keras.layers.Dense(1)])
    model.compile(getattr(keras.optimizers, layout["class"])(**layout["arguments"]), "mse")
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 1), np.float32), verbose=0)
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as archive, h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as f:
        group = f["optimizer/vars"]
        assert [list(group[str(i)].shape) for i in range(len(group))] == layout["shapes"]


def _calls(serialized) -> dict:
    return {entry["name"]: entry["inbound_nodes"] for entry in serialized["config"]["layers"]}


def test_a_model_used_as_a_layer_is_numbered_as_keras_numbers_it_both_ways(tmp_path):
    """Keras numbers a model's call node 1 in a configuration (node 0 is its own making): ipu-teach writes that
    (tf-keras looped forever on node 0) and reads Keras' (it refused node 1), here from Keras' own file."""
    theirs = CASES["nested_model_config"]
    mine = keras_config.to_keras_v3(nested(keras))
    assert _calls(mine) == _calls(theirs)
    assert _calls(theirs)["add"][0][0][:2] == ["base", 1]
    model = keras_config.from_keras(theirs)
    assert [layer.name for layer in model.layers] == ["outer_in", "base", "skip", "add", "out"]
    assert model.get_layer("base").count_params() == 4 * 5 + 5 + 5 * 3 + 3
