"""The ``.keras`` files of Keras 2.13+ / tf-keras (``saving/saving_lib.py``), read and written.

The zip holds ``metadata.json``, ``config.json`` (the model's configuration, with its ``compile_config``)
and ``model.weights.h5``, whose groups follow the model's attributes rather than layer names:
``layers/dense/vars/0``, ``layers/dense_1/vars/0``... each layer named after its class (snake case,
numbered in ``model.layers`` order), its variables numbered in Keras' order (trainable first); a recurrent
layer's under ``cell/vars``, a Bidirectional's under ``forward_layer/cell/vars`` and ``backward_layer/...``,
a model inside the model's under its own ``layers/``. ``model.save("m.keras")`` writes this layout, which
real Keras loads; ipu-teach's own zip (``config.json`` with ``"format": "ipu-teach model 1"``, written to
other names) is told apart by its ``model.weights.npz``.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import math
import os
import zipfile

from ...atomic import atomic_write
from ...untrusted import WIDEST_REAL_ITEMSIZE, open_zip, parse_json, read_zip_entry
from ...validation import BadFileError, bad_file
from .. import backend
from . import hdf5_format, keras_config, optimizer_state

WHAT = "Keras .keras file"
REMEDY = "load a file written by Keras' model.save('....keras')"
CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"
SLACK_BYTES = 2**20
"""Room in ``model.weights.h5`` beyond the model's weights: HDF5's own headers, metrics' and optimizer's variables."""


def zip_entries(filepath) -> list | None:
    """The entries of ``filepath`` if it is a regular file and a zip, else None."""
    with contextlib.suppress(OSError, BadFileError), open_zip(filepath, WHAT, REMEDY) as archive:
        return archive.namelist()
    return None


def is_keras_file(filepath) -> bool:
    """A zip holding Keras' ``model.weights.h5`` (ipu-teach's own model files hold ``model.weights.npz``)."""
    return WEIGHTS in (zip_entries(filepath) or [])


def _layer_paths(layers, prefix) -> list:
    """(layer, its group) as Keras' ``_save_container_state`` names them: by class, numbered on repeats."""
    used, paths = {}, []
    for layer in layers:
        name = backend.snake_case(_keras_class_name(layer))
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 0
        paths.append((layer, f"{prefix}/{name}" if prefix else name))
    return paths


def _keras_class_name(layer) -> str:
    from .model_config import class_name

    return class_name(layer)


def variable_groups(layer, path="") -> list:
    """(group, owner, weights) for ``layer`` and what it holds, as tf-keras' ``_save_state`` walk writes them: every
    object's own variables in ``<path>/vars`` (empty groups included, as Keras writes them)."""
    from ..layers.recurrent import _RNN
    from ..layers.wrappers import Bidirectional

    def at(name):
        return f"{path}/{name}" if path else name

    if hasattr(layer, "_order"):  # a model, or a model used as a layer
        groups = [(at("vars"), layer, [])]
        for inner, inner_path in _layer_paths(layer.layers, at("layers")):
            groups += variable_groups(inner, inner_path)
        return groups
    if isinstance(layer, Bidirectional):  # also keeps the layer it was given, unbuilt: empty groups
        groups = [(at("vars"), layer, []), (at("layer/vars"), layer, []), (at("layer/cell/vars"), layer, [])]
        return (
            groups
            + variable_groups(layer.forward_layer, at("forward_layer"))
            + variable_groups(layer.backward_layer, at("backward_layer"))
        )
    if isinstance(layer, _RNN):  # its weights are its cell's
        return [(at("vars"), layer, []), (at("cell/vars"), layer, hdf5_format.legacy_weights(layer))]
    return [(at("vars"), layer, hdf5_format.legacy_weights(layer))]


def _pairs(f, model, label) -> list:
    """(weight, dataset) for every weight of ``model``, all checked; a group without weights may be absent."""
    pairs = []
    for path, layer, weights in variable_groups(model):
        group = f.get(path)
        stored = sorted(group.keys(), key=lambda n: (len(n), n)) if group is not None else []
        if stored != [str(i) for i in range(len(weights))]:
            raise ValueError(
                f"Layer '{layer.name}' expected {len(weights)} variables, but received {len(stored)} variables "
                f"during loading. Expected: {[w.name for w in weights]} (in {os.fspath(label)!r}, {path})"
            )
        for i, weight in enumerate(weights):
            found = hdf5_format.dataset(group, str(i), label)
            hdf5_format.check_real(found, label)
            if found.shape != tuple(weight.shape):
                raise ValueError(
                    f"Layer '{layer.name}': weight {weight.name} has shape {tuple(weight.shape)} but {path}/{i} in "
                    f"{os.fspath(label)!r} has shape {found.shape}; the architectures differ"
                )
            pairs.append((weight, found))
    return pairs


@contextlib.contextmanager
def _weights_file(archive, model, label):
    """``with _weights_file(...) as f``: the archive's ``model.weights.h5``, read within a bound of what
    ``model``'s weights, an optimizer's slots and metrics' variables need."""
    values = sum(math.prod(w.shape) for w in model.weights)
    limit = 4 * WIDEST_REAL_ITEMSIZE * values + SLACK_BYTES  # weights, optimizer slots, metrics
    data = read_zip_entry(archive, WEIGHTS, limit, label, WHAT, REMEDY)
    with hdf5_format.open_h5(data, "load_model()", f"{os.fspath(label)}/{WEIGHTS}") as f:
        yield f


def load_model(filepath, custom_objects=None, compile=True):
    """A model of a Keras ``.keras`` file: architecture, weights, compile arguments and the optimizer's
    state where the file holds it (``optimizer/vars``: tf-keras' newer optimizers and ipu-teach write it;
    Keras' legacy optimizers start afresh, as in Keras)."""
    with open_zip(filepath, WHAT, REMEDY) as archive:
        serialized = parse_json(
            read_zip_entry(archive, CONFIG, hdf5_format.MAX_CONFIG_BYTES, filepath, WHAT, REMEDY),
            filepath,
            WHAT,
            REMEDY,
        )
        if not isinstance(serialized, dict):
            raise bad_file(filepath, WHAT, f"its {CONFIG} is not a model's configuration", REMEDY)
        stored = archive.getinfo(WEIGHTS).file_size
        model = hdf5_format.build_model(serialized, custom_objects, stored, filepath, WHAT, REMEDY)
        with _weights_file(archive, model, filepath) as f:
            hdf5_format.assign([(weight, found[()]) for weight, found in _pairs(f, model, filepath)])
            compile_config = serialized.get("compile_config")
            if compile and isinstance(compile_config, dict):
                training_config = {**compile_config, "optimizer_config": compile_config.get("optimizer")}
                hdf5_format.compile_from(model, training_config, custom_objects, filepath)
                steps = compile_config.get("steps_per_execution")
                if type(steps) is int and steps > 0:
                    model.steps_per_execution = steps
                group = f.get("optimizer/vars")
                if model.compiled and isinstance(group, hdf5_format.h5py_module("load_model()").Group):
                    optimizer_state.read_variables(group, model, filepath)
    return model


def load_weights(model, filepath) -> None:
    """``model.load_weights("m.keras")``: the weights of a Keras ``.keras`` file, by layer order."""
    with open_zip(filepath, WHAT, REMEDY) as archive, _weights_file(archive, model, filepath) as f:
        hdf5_format.assign([(weight, found[()]) for weight, found in _pairs(f, model, filepath)])


KERAS_VERSION = "2.13.1"
"""The ``keras_version`` of ``metadata.json``: the first Keras whose ``.keras`` layout this is."""


def save_model(model, filepath, include_optimizer=True) -> None:
    """tf-keras ``saving_lib.save_model``: ``metadata.json``, ``config.json`` and ``model.weights.h5``, stored
    uncompressed in that order; the weights of every layer, and the optimizer's state (see
    ``optimizer_state.write_variables``). Metrics' running totals are not written (Keras resets them each
    epoch). Written atomically."""
    h5py = hdf5_format.h5py_module("save_model()")
    model.ensure_built()
    metadata = {"keras_version": KERAS_VERSION, "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    weights = io.BytesIO()
    with h5py.File(weights, "w") as f:
        for path, _, layer_weights in variable_groups(model):
            group = f.require_group(path)
            for i, weight in enumerate(layer_weights):
                group.create_dataset(str(i), data=weight.data)
        if include_optimizer and model.compiled:
            optimizer_state.write_variables(f, model)
    with atomic_write(filepath, "wb") as stream, zipfile.ZipFile(stream, "w") as archive:
        archive.writestr(METADATA, json.dumps(metadata))
        archive.writestr(CONFIG, json.dumps(keras_config.to_keras_v3(model)))
        archive.writestr(WEIGHTS, weights.getvalue())
