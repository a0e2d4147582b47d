"""Reading the ``.keras`` files of Keras 2.13+ / tf-keras (``saving/saving_lib.py``).

The zip holds ``config.json`` (the model's configuration, with its ``compile_config``), ``metadata.json``
and ``model.weights.h5``, whose groups follow the model's attributes rather than layer names:
``layers/dense/vars/0``, ``layers/dense_1/vars/0``... each layer named after its class (snake case,
numbered in ``model.layers`` order), its variables numbered in Keras' order (trainable first). ipu-teach's
own ``model.save`` writes another zip (``config.json`` with ``"format": "ipu-teach model 1"``), which
``load_model`` tells apart by that entry.
"""

from __future__ import annotations

import contextlib
import math
import os

from ...untrusted import WIDEST_REAL_ITEMSIZE, open_zip, parse_json, read_zip_entry
from ...validation import BadFileError, bad_file
from .. import backend
from . import graph, hdf5_format

WHAT = "Keras .keras file"
REMEDY = "load a file written by Keras' model.save('....keras')"
CONFIG = "config.json"
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
        paths.append((layer, f"{prefix}/{name}"))
    return paths


def _keras_class_name(layer) -> str:
    from .model_config import class_name

    return class_name(layer)


def _pairs(f, layers, prefix, label) -> list:
    """(weight, dataset) for every weight of ``layers``, a model inside the model by its own layers."""
    pairs = []
    for layer, path in _layer_paths(layers, prefix):
        if hasattr(layer, "_order"):  # a functional or Sequential model used as a layer
            pairs += _pairs(f, graph.keras_layer_order(layer), f"{path}/layers", label)
            continue
        weights = hdf5_format.legacy_weights(layer)
        group = f.get(f"{path}/vars")
        if group is not None and not len(group) and f.get(f"{path}/cell/vars") is not None:
            path += "/cell"  # a recurrent layer's weights are its cell's
            group = f[f"{path}/vars"]
        stored = sorted(group.keys(), key=lambda n: (len(n), n)) if group is not None else []
        if stored != [str(i) for i in range(len(weights))]:
            raise ValueError(
                f"Layer '{layer.name}' expected {len(weights)} variables, but received {len(stored)} variables "
                f"during loading. Expected: {[w.name for w in weights]} (in {os.fspath(label)!r}, {path}/vars)"
            )
        for i, weight in enumerate(weights):
            found = hdf5_format.dataset(group, str(i), label)
            hdf5_format.check_real(found, label)
            if found.shape != tuple(weight.shape):
                raise ValueError(
                    f"Layer '{layer.name}': weight {weight.name} has shape {tuple(weight.shape)} but {path}/vars/{i} "
                    f"in {os.fspath(label)!r} has shape {found.shape}; the architectures differ"
                )
            pairs.append((weight, found))
    return pairs


def read_weights(archive, model, label) -> list:
    """(weight, array) for every weight of ``model`` from the archive's ``model.weights.h5``, all checked first."""
    values = sum(math.prod(w.shape) for w in model.weights)
    limit = 4 * WIDEST_REAL_ITEMSIZE * values + SLACK_BYTES  # weights, optimizer slots, metrics
    data = read_zip_entry(archive, WEIGHTS, limit, label, WHAT, REMEDY)
    with hdf5_format.open_h5(data, "load_model()", f"{os.fspath(label)}/{WEIGHTS}") as f:
        return [(weight, found[()]) for weight, found in _pairs(f, graph.keras_layer_order(model), "layers", label)]


def load_model(filepath, custom_objects=None, compile=True):
    """A model of a Keras ``.keras`` file: architecture, weights, and compile arguments (the optimizer
    starts afresh: its state in the file is in the newer optimizers' layout)."""
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
        hdf5_format.assign(read_weights(archive, model, filepath))
        compile_config = serialized.get("compile_config")
        if compile and isinstance(compile_config, dict):
            training_config = {**compile_config, "optimizer_config": compile_config.get("optimizer")}
            hdf5_format.compile_from(model, training_config, custom_objects, filepath)
    return model


def load_weights(model, filepath) -> None:
    """``model.load_weights("m.keras")``: the weights of a Keras ``.keras`` file, by layer order."""
    with open_zip(filepath, WHAT, REMEDY) as archive:
        hdf5_format.assign(read_weights(archive, model, filepath))
