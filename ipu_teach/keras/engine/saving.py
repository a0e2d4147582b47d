"""Weights to and from ``.npz`` (no pickle): arrays in model order, with names and shapes to check.

A weights file may come from someone else, so loading checks everything before changing anything:
that it is a complete ``.npz`` written by ``save_weights``, that it holds one array per weight of the
model, and that each array has the shape and the kind of weight (``conv2d/kernel``...) of the weight
it goes to. Layer numbers are ignored (``dense_3`` loads into ``dense``): Keras numbers layers per
session, and loads weights by the model's order as its HDF5 format does.
"""

import json
import os
import re

import numpy as np

from ...atomic import atomic_write
from ...validation import BadFileError, bad_file, read_npz

WHAT = "weights file"
REMEDY = "load a file written by model.save_weights (save it again if it was cut short)"


def save_weights(model, filepath) -> None:
    """Write atomically: a crash mid-write never leaves a half file at ``filepath``."""
    filepath = os.fspath(filepath)
    weights = model.weights
    arrays = {f"w{i}": w.data for i, w in enumerate(weights)}
    meta = {"model": model.name, "names": [w.name for w in weights], "shapes": [list(w.shape) for w in weights]}
    with atomic_write(filepath, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)


def weight_kind(name: str) -> str:
    """``conv2d_3/kernel:0`` -> ``conv2d/kernel``: what a weight is, without the session's layer number."""
    layer, _, variable = name.partition("/")
    return f"{re.sub(r'_[0-9]+$', '', layer)}/{variable.split(':')[0]}"


def _read(filepath):
    """(metadata, arrays in order) of a file written by ``save_weights``; BadFileError otherwise."""
    arrays = read_npz(filepath, WHAT, REMEDY)
    try:
        meta = json.loads(str(arrays.pop("__meta__")))
        names, model = [str(n) for n in meta["names"]], str(meta["model"])
    except (KeyError, ValueError, TypeError):
        raise bad_file(filepath, WHAT, "its metadata (__meta__) is missing or unreadable", REMEDY) from None
    missing = [f"w{i}" for i in range(len(names)) if f"w{i}" not in arrays]
    if missing or len(arrays) != len(names):
        raise bad_file(
            filepath,
            WHAT,
            f"its metadata lists {len(names)} weights but it holds arrays {', '.join(sorted(arrays)) or 'none'}",
            REMEDY,
        )
    return model, names, [arrays[f"w{i}"] for i in range(len(names))]


def load_weights(model, filepath) -> None:
    """Check the file fits this architecture (count, then each weight's kind and shape) before changing anything."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_weights: no such file {filepath!r}")
    saved_model, names, arrays = _read(filepath)
    weights = model.weights
    if len(arrays) != len(weights):
        raise ValueError(
            f"load_weights: {filepath!r} holds {len(arrays)} weights (saved from model "
            f"'{saved_model}') but model '{model.name}' has {len(weights)}; "
            "the architectures differ"
        )
    for weight, array, saved_name in zip(weights, arrays, names):
        if weight_kind(saved_name) != weight_kind(weight.name):
            raise ValueError(
                f"load_weights: weight {weight.name} of model '{model.name}' would get the file's "
                f"{saved_name} in {filepath!r} (saved from model '{saved_model}'); the architectures "
                "differ (layers of another kind or order)"
            )
        if array.shape != weight.shape:
            raise ValueError(
                f"load_weights: weight {weight.name} has shape {weight.shape} but the file's "
                f"{saved_name} has shape {array.shape}; the architectures differ"
            )
        if array.dtype.kind not in "fiu":
            raise BadFileError(f"{filepath} is not a valid {WHAT}: {saved_name} holds {array.dtype} values; {REMEDY}")
    for weight, array in zip(weights, arrays):
        weight.data = array.astype(weight.dtype)
