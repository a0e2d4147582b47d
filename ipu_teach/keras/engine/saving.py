"""Weights to and from ``.npz`` (no pickle): arrays in model order, with names and shapes to check."""
import json
import os

import numpy as np

from ...atomic import atomic_write


def save_weights(model, filepath) -> None:
    """Write atomically: a crash mid-write never leaves a half file at ``filepath``."""
    filepath = os.fspath(filepath)
    weights = model.weights
    arrays = {f"w{i}": w.data for i, w in enumerate(weights)}
    meta = {"model": model.name, "names": [w.name for w in weights], "shapes": [list(w.shape) for w in weights]}
    with atomic_write(filepath, "wb") as f:
        np.savez(f, __meta__=np.array(json.dumps(meta)), **arrays)


def load_weights(model, filepath) -> None:
    """Check the file fits this architecture (count, then each shape) before changing anything."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_weights: no such file {filepath!r}")
    with np.load(filepath, allow_pickle=False) as data:
        if "__meta__" not in data:
            raise ValueError(f"load_weights: {filepath!r} was not written by save_weights (no metadata)")
        meta = json.loads(str(data["__meta__"]))
        arrays = [data[f"w{i}"] for i in range(len(meta["names"]))]
    weights = model.weights
    if len(arrays) != len(weights):
        raise ValueError(f"load_weights: {filepath!r} holds {len(arrays)} weights (saved from model "
                         f"'{meta['model']}') but model '{model.name}' has {len(weights)}; "
                         "the architectures differ")
    for weight, array, saved_name in zip(weights, arrays, meta["names"]):
        if array.shape != weight.shape:
            raise ValueError(f"load_weights: weight {weight.name} has shape {weight.shape} but the file's "
                             f"{saved_name} has shape {array.shape}; the architectures differ")
    for weight, array in zip(weights, arrays):
        weight.data = array.astype(weight.dtype)
