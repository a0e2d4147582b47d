"""Weights to and from ``.npz`` (no pickle): arrays in model order (each layer's at its first use:
``graph.first_use_weights``), with names and shapes to check.

A weights file may come from someone else, so loading checks everything before changing anything,
and from the arrays' headers before reading any array: that it is a complete ``.npz`` written by
``save_weights``, that it holds one array per weight of the model, and that each array has the shape,
a real dtype and the kind of weight (``conv2d/kernel``...) of the weight it goes to. Layer numbers
are ignored (``dense_3`` loads into ``dense``): Keras numbers layers per session, and loads weights
by the model's order as its HDF5 format does.
"""

import json
import os
import re

import numpy as np

from ...atomic import atomic_write
from ...untrusted import open_npz, parse_json
from ...validation import bad_file, few
from . import graph

WHAT = "weights file"
REMEDY = "load a file written by model.save_weights (save it again if it was cut short)"


def save_weights(model, filepath) -> None:
    """Write atomically: a crash mid-write never leaves a half file at ``filepath``."""
    filepath = os.fspath(filepath)
    weights = graph.first_use_weights(model)
    arrays = {f"w{i}": w.data for i, w in enumerate(weights)}
    meta = {"model": model.name, "names": [w.name for w in weights], "shapes": [list(w.shape) for w in weights]}
    with atomic_write(filepath, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)


def weight_kind(name: str) -> str:
    """``conv2d_3/kernel:0`` -> ``conv2d/kernel``: what a weight is, without the session's layer number."""
    layer, _, variable = name.partition("/")
    return f"{re.sub(r'_[0-9]+$', '', layer)}/{variable.split(':')[0]}"


MAX_METADATA_BYTES = 16 * 2**20
"""``__meta__`` holds a name and a shape per weight: a few KiB for a large model."""


def _metadata(npz, filepath) -> tuple:
    """(the saved model's name, its weight names) from ``__meta__`` (its size checked before it is read),
    having checked that the file holds exactly the arrays it lists."""
    header = npz.headers.get("__meta__")
    if header is None or header.dtype.kind != "U" or header.shape != () or header.nbytes > MAX_METADATA_BYTES:
        raise bad_file(filepath, WHAT, "its metadata (__meta__) is missing or unreadable", REMEDY)
    meta = parse_json(str(npz.read("__meta__")).encode(), filepath, WHAT, REMEDY)
    if not (isinstance(meta, dict) and isinstance(meta.get("names"), list) and "model" in meta):
        raise bad_file(filepath, WHAT, "its metadata (__meta__) is missing or unreadable", REMEDY)
    names = [str(name) for name in meta["names"]]
    expected = {"__meta__", *(f"w{i}" for i in range(len(names)))}
    if set(npz.headers) != expected:
        arrays = sorted(set(npz.headers) - {"__meta__"}, key=lambda name: (len(name), name))
        raise bad_file(
            filepath, WHAT, f"its metadata lists {len(names):,} weights but it holds arrays {few(arrays)}", REMEDY
        )
    return str(meta["model"]), names


def check_fits(weights, headers, entries, filepath, what=WHAT, remedy=REMEDY, caller="load_weights") -> None:
    """Each array a file declares (its ``ArrayHeader``) has the shape of the weight it goes to and holds
    real numbers: checked before any array is read, so a file declaring huge arrays costs nothing."""
    for weight, header, entry in zip(weights, headers, entries):
        if header.shape != tuple(weight.shape):
            raise ValueError(
                f"{caller}: weight {weight.name} has shape {tuple(weight.shape)} but {entry} in {filepath!r} "
                f"has shape {header.shape}; the architectures differ"
            )
        if header.dtype.kind not in "fiu":
            raise bad_file(filepath, what, f"{entry} holds {header.dtype} values, not real numbers", remedy)


def load_weights(model, filepath) -> None:
    """Check the file fits this architecture (count, then each weight's kind and shape) before reading
    its arrays or changing anything."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_weights: no such file {filepath!r}")
    weights = graph.first_use_weights(model)
    with open_npz(filepath, WHAT, REMEDY) as npz:
        saved_model, names = _metadata(npz, filepath)
        if len(names) != len(weights):
            raise ValueError(
                f"load_weights: {filepath!r} holds {len(names):,} weights (saved from model "
                f"'{saved_model}') but model '{model.name}' has {len(weights)}; "
                "the architectures differ"
            )
        for weight, saved_name in zip(weights, names):
            if weight_kind(saved_name) != weight_kind(weight.name):
                raise ValueError(
                    f"load_weights: weight {weight.name} of model '{model.name}' would get the file's "
                    f"{saved_name} in {filepath!r} (saved from model '{saved_model}'); the architectures "
                    "differ (layers of another kind or order)"
                )
        check_fits(weights, [npz.headers[f"w{i}"] for i in range(len(names))], names, filepath)
        arrays = [npz.read(f"w{i}") for i in range(len(names))]
    for weight, array in zip(weights, arrays):
        weight.data = array.astype(weight.dtype)
