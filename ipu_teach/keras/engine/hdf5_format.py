"""Keras 2's HDF5 files (``.h5``), read and written with h5py in Keras' exact layout.

Weights (``save_weights("w.h5")``, tf-keras ``saving/legacy/hdf5_format.py``): the root's attribute
``layer_names`` lists ``model.layers``; one group per layer, whose attribute ``weight_names`` lists the
layer's weights (trainable first, then the rest: Keras' ``_legacy_weights`` order) and which holds each
as a dataset named by the weight (``dense/kernel:0``); a ``top_level_model_weights`` group; the
``backend`` and ``keras_version`` attributes. Loading goes by layer order (layers without weights are
skipped on both sides), or by layer name with ``by_name=True`` (``skip_mismatch=True`` warns and skips a
layer whose weights do not fit). A whole model (``model.save("m.h5")``) adds the attributes
``model_config`` (the architecture as JSON) and ``training_config`` (the compile arguments) and puts the
weights in ``model_weights``, the optimizer's in ``optimizer_weights``.

A file may come from someone else: it is opened only if it is a regular file, every dataset is checked
(a real dtype, the shape of the weight it goes to; no link or storage outside the file, which could
read another file of the machine) before any is read, and nothing changes until all of them fit.
Written atomically (``ipu_teach/atomic.py``).
"""

from __future__ import annotations

import contextlib
import json
import math
import os

import numpy as np

from ...atomic import atomic_write
from ...untrusted import open_regular, open_source, parse_json
from ...validation import BadFileError, bad_file
from . import keras_config, optimizer_state, weight_budget

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
HDF5_OBJECT_HEADER_LIMIT = 64512
"""Bytes an HDF5 attribute may hold; Keras splits longer name lists into ``layer_names0``, ``layer_names1``..."""
KERAS_VERSION = "2.6.0"
"""The Keras whose layout is written (Graphcore's SDK's); readers check it only to convert Keras 1 files."""
MAX_CONFIG_BYTES = 16 * 2**20
WHAT = "Keras HDF5 file"
REMEDY = "load a file written by Keras' or ipu-teach's save_weights / save to a .h5 name"


def h5py_module(caller: str):
    """h5py, or an ImportError saying how to get it (as Keras: "... requires h5py")."""
    try:
        import h5py
    except ImportError:
        raise ImportError(
            f"`{caller}` using h5 format requires h5py. Could not import h5py. Install it with "
            "`pip install h5py` (it is one of ipu-teach's requirements: `pip install -e .` brings it)"
        ) from None
    return h5py


def is_hdf5(filepath) -> bool:
    """Whether ``filepath`` is a regular file starting with HDF5's signature (whatever its name)."""
    with contextlib.suppress(OSError, BadFileError), open_regular(filepath, WHAT, REMEDY) as stream:
        return stream.read(8) == HDF5_SIGNATURE
    return False


def is_hdf5_name(filepath) -> bool:
    return os.fspath(filepath).endswith((".h5", ".hdf5"))


@contextlib.contextmanager
def open_h5(source, caller: str, label=None):
    """``with open_h5(path or bytes, ...) as f``: the ``h5py.File`` at ``source``, a regular file (or the
    bytes of one inside another file, named ``label``); BadFileError if it is not HDF5."""
    h5py = h5py_module(caller)
    label = label or source
    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(open_source(source, WHAT, REMEDY))
        if stream.read(8) != HDF5_SIGNATURE:
            raise bad_file(label, WHAT, "it is not an HDF5 file (no HDF5 signature)", REMEDY)
        stream.seek(0)
        try:
            f = stack.enter_context(h5py.File(stream, "r"))
        except OSError as error:
            raise bad_file(label, WHAT, f"it is truncated or corrupt ({error})", REMEDY) from None
        yield f


# ----- attributes -----------------------------------------------------------------------------------
def write_names(group, name: str, names) -> None:
    """tf-keras ``save_attributes_to_hdf5_group``: a list of names, split into numbered attributes when
    it is longer than an HDF5 attribute may be."""
    data = np.asarray([n.encode("utf8") for n in names])
    chunks = 1
    while any(part.nbytes > HDF5_OBJECT_HEADER_LIMIT for part in np.array_split(data, chunks)):
        chunks += 1
    if chunks == 1:
        group.attrs[name] = data
    else:
        for number, part in enumerate(np.array_split(data, chunks)):
            group.attrs[f"{name}{number}"] = part


def read_names(group, name: str, label) -> list:
    """tf-keras ``load_attributes_from_hdf5_group``: the names, whole or from numbered chunks."""
    if name in group.attrs:
        parts = [group.attrs[name]]
    else:
        parts = []
        while f"{name}{len(parts)}" in group.attrs:
            parts.append(group.attrs[f"{name}{len(parts)}"])
    names = []
    for part in parts:
        values = np.atleast_1d(np.asarray(part))
        if values.size and values.dtype.kind not in "SUO":
            raise bad_file(label, WHAT, f"its attribute {name!r} of {group.name!r} is not a list of names", REMEDY)
        names += [v.decode("utf8") if isinstance(v, bytes) else str(v) for v in values.tolist()]
    return names


def read_json_attribute(f, name: str, label):
    """The JSON value of the root attribute ``name`` (None if absent), bounded in size and depth."""
    if name not in f.attrs:
        return None
    value = f.attrs[name]
    value = value.encode("utf8") if isinstance(value, str) else bytes(value)
    if len(value) > MAX_CONFIG_BYTES:
        raise bad_file(label, WHAT, f"its {name} holds more than {MAX_CONFIG_BYTES:,} bytes", REMEDY)
    return parse_json(value, label, WHAT, REMEDY)


# ----- datasets --------------------------------------------------------------------------------------
def dataset(group, name: str, label):
    """The dataset ``name`` of ``group``: stored in this file (a hard link, data inside the file), or BadFileError."""
    h5py = h5py_module("load_weights")
    link = group.get(name, getlink=True)
    if link is None:
        raise bad_file(label, WHAT, f"{group.name!r} lists the weight {name[:80]!r} but does not hold it", REMEDY)
    if not isinstance(link, h5py.HardLink):
        raise bad_file(label, WHAT, f"{group.name}/{name[:80]} is a link to elsewhere, not a weight it holds", REMEDY)
    found = group[name]
    if not isinstance(found, h5py.Dataset):
        raise bad_file(label, WHAT, f"{found.name[:80]} is a group, not a weight", REMEDY)
    if found.external or found.is_virtual:
        raise bad_file(label, WHAT, f"{found.name[:80]} keeps its values outside the file", REMEDY)
    return found


def check_real(found, label) -> None:
    if found.dtype.kind not in "fiu":
        raise bad_file(label, WHAT, f"{found.name[:80]} holds {found.dtype} values, not real numbers", REMEDY)


def legacy_weights(layer) -> list:
    """Keras' ``_legacy_weights``: the order of an HDF5 file, trainable weights first."""
    return layer.trainable_weights + layer.non_trainable_weights


# ----- weights ---------------------------------------------------------------------------------------
def write_weights(group, model) -> None:
    """tf-keras ``save_weights_to_hdf5_group``."""
    layers = model.layers
    write_names(group, "layer_names", [layer.name for layer in layers])
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    for layer in sorted(layers, key=lambda layer: layer.name):  # as Keras: group names strictly growing
        write_weight_group(group.create_group(layer.name), legacy_weights(layer))
    write_weight_group(group.create_group("top_level_model_weights"), [])


def write_weight_group(group, weights) -> None:
    write_names(group, "weight_names", [w.name for w in weights])
    for weight in weights:
        group.create_dataset(weight.name, data=weight.data)


def _mismatch(message, skip_mismatch):
    if not skip_mismatch:
        raise ValueError(message)
    print(f"WARNING:tensorflow:{message}")


def _saved_layers(group, label) -> list:
    """(name, weight names) of each layer listed in ``layer_names``."""
    h5py = h5py_module("load_weights")
    saved = []
    for name in read_names(group, "layer_names", label):
        found = group.get(name)
        if not isinstance(found, h5py.Group):
            raise bad_file(label, WHAT, f"it lists the layer {name[:80]!r} but holds no group for it", REMEDY)
        saved.append((name, read_names(found, "weight_names", label)))
    return saved


def read_weights(group, model, label, by_name=False, skip_mismatch=False) -> list:
    """(weight, array) pairs for ``model`` from a weights group, every dataset checked before any is read;
    Keras' messages for layers and weights that do not match."""
    if not ("layer_names" in group.attrs or "layer_names0" in group.attrs):
        raise bad_file(label, WHAT, "it has no layer_names: it holds no Keras weights", REMEDY)
    saved = _saved_layers(group, label)
    pairs = []
    if by_name:
        index = {}
        for layer in model.layers:
            index.setdefault(layer.name, []).append(layer)
        for k, (name, weight_names) in enumerate(saved):
            for layer in index.get(name, []):
                pairs += _layer_pairs(group[name], weight_names, layer, k, None, label, skip_mismatch)
    else:
        layers = [layer for layer in model.layers if legacy_weights(layer)]
        saved = [(name, weight_names) for name, weight_names in saved if weight_names]
        if len(saved) != len(layers):
            raise ValueError(
                "Layer count mismatch when loading weights from file. "
                f"Model expected {len(layers)} layers, found {len(saved)} saved layers."
            )
        for k, ((name, weight_names), layer) in enumerate(zip(saved, layers)):
            pairs += _layer_pairs(group[name], weight_names, layer, k, name, label, False)
    return [(weight, found[()]) for weight, found in pairs]


def _layer_pairs(group, weight_names, layer, k, saved_name, label, skip_mismatch) -> list:
    """(weight, dataset) for one layer, in Keras' words when the count or a shape differs."""
    weights = legacy_weights(layer)
    named = f"named {layer.name}"
    if saved_name is not None:
        named += f" in the current model, {saved_name} in the save file"
    if len(weight_names) != len(weights):
        _mismatch(
            (
                f"Skipping loading of weights for layer #{k} ({named}) due to mismatch in number of weights. "
                if skip_mismatch
                else f"Weight count mismatch for layer #{k} ({named}). "
            )
            + f"Layer expects {len(weights)} weight(s). Received {len(weight_names)} saved weight(s)",
            skip_mismatch,
        )
        return []
    pairs = []
    for weight, weight_name in zip(weights, weight_names):
        found = dataset(group, weight_name, label)
        check_real(found, label)
        if found.shape != tuple(weight.shape):
            _mismatch(
                (
                    f"Skipping loading weights for layer #{k} ({named}) due to mismatch in shape for weight "
                    if skip_mismatch
                    else f"Shape mismatch in layer #{k} ({named}) for weight "
                )
                + f"{weight.name}. Weight expects shape {tuple(weight.shape)}. "
                f"Received saved weight with shape {found.shape}",
                skip_mismatch,
            )
            continue
        pairs.append((weight, found))
    return pairs


def assign(pairs) -> None:
    for weight, array in pairs:
        weight.data = np.asarray(array).astype(weight.dtype)


def save_weights(model, filepath) -> None:
    """tf-keras ``save_weights`` to an ``.h5`` name; written atomically."""
    h5py = h5py_module("save_weights")
    with atomic_write(filepath, "wb") as stream, h5py.File(stream, "w") as f:
        write_weights(f, model)


def load_weights(model, filepath, by_name=False, skip_mismatch=False) -> None:
    if skip_mismatch and not by_name:
        raise ValueError("When calling model.load_weights, skip_mismatch can only be set to True when by_name is True.")
    with open_h5(filepath, "load_weights") as f:
        group = f["model_weights"] if "layer_names" not in f.attrs and "model_weights" in f else f
        assign(read_weights(group, model, filepath, by_name, skip_mismatch))


# ----- whole models ----------------------------------------------------------------------------------
def save_model(model, filepath, include_optimizer=True) -> None:
    """tf-keras ``save_model_to_hdf5``: ``model_config``, ``training_config``, ``model_weights`` and
    ``optimizer_weights``, as real Keras writes and reads them."""
    h5py = h5py_module("save_model()")
    model.ensure_built()
    with atomic_write(filepath, "wb") as stream, h5py.File(stream, "w") as f:
        f.attrs["backend"] = b"tensorflow"
        f.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        f.attrs["model_config"] = json.dumps(keras_config.to_keras(model)).encode("utf8")
        if model.compiled:
            f.attrs["training_config"] = json.dumps(keras_config.training_config(model)).encode("utf8")
        write_weights(f.create_group("model_weights"), model)
        if include_optimizer and model.compiled:
            optimizer_state.write(f, model)


def _stored_values(group) -> int:
    """How many values the datasets under ``group`` declare: the budget of the weights its architecture may make."""
    h5py = h5py_module("load_model()")
    sizes = []
    group.visititems(lambda _, item: sizes.append(math.prod(item.shape)) if isinstance(item, h5py.Dataset) else None)
    return sum(sizes)


def build_model(serialized, custom_objects, stored_values, label, what=WHAT, remedy=REMEDY):
    """The model of a Keras configuration, built under a budget of the values the file stores; what
    cannot be built is a ValueError naming the file."""

    def refuse(weight_name, shape):
        raise bad_file(
            label,
            what,
            f"its architecture declares a weight {weight_name} of shape {shape} ({math.prod(shape):,} values), "
            f"more than the file's weights hold ({stored_values:,} values)",
            remedy,
        )

    if not isinstance(serialized, dict) or not isinstance(serialized.get("config"), dict):
        raise bad_file(label, what, "its model configuration is not a Keras model's", remedy)
    try:
        with weight_budget.limited_to(stored_values, refuse):
            return keras_config.from_keras(serialized, custom_objects)
    except BadFileError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise ValueError(f"load_model: cannot build the model of {os.fspath(label)!r}: {error}") from None


def compile_from(model, training_config, custom_objects, label) -> None:
    """Compile as the file's ``training_config`` says, or leave uncompiled with Keras' warning."""
    if training_config is None:
        print(
            "WARNING:tensorflow:No training configuration found in the save file, so the model was *not* "
            "compiled. Compile it manually."
        )
        return
    try:
        model.compile(**keras_config.compile_arguments(training_config, custom_objects))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ValueError(f"load_model: cannot compile the model of {os.fspath(label)!r} as saved: {error}") from None


def load_model(filepath, custom_objects=None, compile=True):
    """tf-keras ``load_model_from_hdf5``."""
    with open_h5(filepath, "load_model()") as f:
        serialized = read_json_attribute(f, "model_config", filepath)
        if serialized is None:
            raise ValueError(f"No model config found in the file at {os.fspath(filepath)}.")
        if "model_weights" not in f:
            raise bad_file(filepath, WHAT, "it has no model_weights", REMEDY)
        model = build_model(serialized, custom_objects, _stored_values(f["model_weights"]), filepath)
        assign(read_weights(f["model_weights"], model, filepath))
        if compile:
            compile_from(model, read_json_attribute(f, "training_config", filepath), custom_objects, filepath)
            if model.compiled and "optimizer_weights" in f:
                optimizer_state.read(f["optimizer_weights"], model, filepath)
    return model
