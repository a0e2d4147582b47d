"""``model.save`` to names other than ``.h5`` and ``.keras`` / ``keras.models.load_model``: a whole model in
one zip file of ipu-teach's, without pickle.

The zip holds ``config.json`` (the architecture: every layer's class and arguments, and how the
layers connect; the compile arguments), ``model.weights.npz`` (every weight, each layer's at its first
use: ``graph.first_use_weights``) and ``optimizer.npz`` (its step count and state per weight). Loading
makes the layers again, reconnects them, sets the weights and, for a compiled model, compiles it and
restores the optimizer, so training continues where it stopped.
"""

import collections
import contextlib
import io
import json
import math
import os
import re
import zipfile

import numpy as np

from ...atomic import atomic_write
from ...untrusted import WIDEST_REAL_ITEMSIZE, npz_bound, open_npz, open_zip, parse_json, read_zip_entry
from ...validation import BadFileError, bad_file, few
from .. import layers as layers_module
from .. import losses as losses_module
from .. import optimizers as optimizers_module
from ..layers.base import InputLayer
from . import config, graph, keras_config, weight_budget
from .saving import check_fits

FORMAT = "ipu-teach model 1"


def _arrays_bytes(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def _architecture(model) -> dict:
    order = model._order
    index = {id(t): i for i, t in enumerate(order)}
    layers = list({id(t.layer): t.layer for t in order}.values())
    layer_index = {id(layer): i for i, layer in enumerate(layers)}
    return {
        "class_name": type(model).__name__,
        "name": model.name,
        "layers": [
            {
                "class_name": type(layer).__name__,
                "config": layer.get_config()
                if not isinstance(layer, InputLayer)
                else {"shape": list(layer.output_shape[1:]), "name": layer.name},
            }
            for layer in layers
        ],
        "tensors": [
            {"layer": layer_index[id(t.layer)], "inputs": [index[id(p)] for p in t.inputs], "output": t.index}
            for t in order
        ],
        "inputs": [index[id(t)] for t in model.inputs],
        "outputs": [index[id(t)] for t in model.outputs],
    }


def _compile_arguments(model) -> dict:
    def loss_entry(loss):
        if loss is None or isinstance(loss, str):
            return loss
        loss = losses_module.get(loss)
        return {"class_name": type(loss).__name__, "config": config.encode(vars(loss))}

    loss = model.loss
    loss = (
        {k: loss_entry(v) for k, v in loss.items()}
        if isinstance(loss, dict)
        else [loss_entry(v) for v in loss]
        if isinstance(loss, (list, tuple))
        else loss_entry(loss)
    )
    outputs = model.compiled_outputs
    _, loss_weights, metrics = outputs._given
    return {
        "optimizer": {"class_name": type(model.optimizer).__name__, "config": model.optimizer.get_config()},
        "loss": loss,
        "loss_weights": loss_weights,
        "metrics": keras_config.metrics_to_keras(metrics),
        "weighted_metrics": keras_config.metrics_to_keras(outputs.weighted_metrics_given),
        "steps_per_execution": model.steps_per_execution,
    }


def save_model(model, filepath) -> None:
    """Write atomically: a crash mid-write never leaves a half file at ``filepath``."""
    model.ensure_built()
    filepath = os.fspath(filepath)
    description = {
        "format": FORMAT,
        "model": _architecture(model),
        "compile": _compile_arguments(model) if model.compiled else None,
    }
    weights = {f"w{i}": w.data.copy() for i, w in enumerate(graph.first_use_weights(model))}
    with atomic_write(filepath, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("config.json", json.dumps(description, indent=1))
        archive.writestr("model.weights.npz", _arrays_bytes(weights))
        if model.compiled:
            archive.writestr("optimizer.npz", _arrays_bytes(_optimizer_state(model)))


def _optimizer_state(model) -> dict:
    optimizer, state = model.optimizer, {"iterations": np.array(model.optimizer.iterations)}
    for i, weight in enumerate(graph.first_use_weights(model)):
        for (key, slot), value in optimizer._slots.items():
            if key == id(weight):
                state[f"slot{slot}/w{i}"] = value
    return state


WHAT = "model file"
REMEDY = "load a file written by model.save"
MAX_CONFIG_BYTES = 16 * 2**20
"""``config.json`` holds a few hundred bytes per layer: 0.5 MiB for 1,000 layers."""
_MALFORMED = (KeyError, TypeError, ValueError, IndexError, AttributeError)
"""What building from an architecture or compile arguments of the wrong shape or types raises."""


def load_model(filepath, custom_objects=None, compile=True):
    """A model file may come from someone else: its architecture is built first, then each array is
    checked from its header (entry names, shapes, real numbers; the optimizer's step count and slots)
    before any is read. Anything damaged or crafted is a BadFileError naming the file."""
    filepath, custom_objects = os.fspath(filepath), custom_objects or {}
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_model: no such file {filepath!r}")
    with open_zip(filepath, WHAT, REMEDY) as archive:
        description = (
            parse_json(
                read_zip_entry(archive, "config.json", MAX_CONFIG_BYTES, filepath, WHAT, REMEDY), filepath, WHAT, REMEDY
            )
            if "config.json" in archive.namelist()
            else None
        )
        if not isinstance(description, dict) or description.get("format") != FORMAT:
            raise BadFileError(f"load_model: {filepath!r} is not a model saved by ipu-teach's model.save")
        stored = _declared_size(archive, "model.weights.npz", filepath)
        with weight_budget.limited_to(stored, _refuse_weight(filepath, stored)), _malformed(filepath, "architecture"):
            model = _rebuild(description["model"], custom_objects, filepath)
        weights = graph.first_use_weights(model)
        for weight, array in zip(weights, _read_arrays(archive, "model.weights.npz", weights, filepath)):
            weight.data = np.asarray(array, dtype=weight.dtype)
        if compile and description.get("compile") is not None:
            with _malformed(filepath, "compile arguments"):
                _recompile(model, description["compile"], custom_objects, filepath)
            if "optimizer.npz" in archive.namelist():
                _restore_optimizer(model, archive, filepath)
    return model


def _declared_size(archive, name, filepath) -> int:
    try:
        return archive.getinfo(name).file_size
    except KeyError:
        raise bad_file(filepath, WHAT, f"it has no {name}", REMEDY) from None


@contextlib.contextmanager
def _malformed(filepath, part):
    """Errors from building a ``part`` of the file that is of the wrong shape or types name the file."""
    try:
        yield
    except BadFileError:
        raise
    except _MALFORMED as error:
        raise bad_file(
            filepath, WHAT, f"its {part} is malformed ({type(error).__name__}: {str(error)[:200]})", REMEDY
        ) from None


def _read_arrays(archive, entry, weights, filepath) -> list:
    """The arrays of ``model.weights.npz``, one per weight, each checked from its header before any is read."""
    limit = npz_bound([WIDEST_REAL_ITEMSIZE * math.prod(w.shape) for w in weights])
    with open_npz(read_zip_entry(archive, entry, limit, filepath, WHAT, REMEDY), WHAT, REMEDY, filepath) as npz:
        names = [f"w{i}" for i in range(len(weights))]
        if set(npz.headers) != set(names):
            raise bad_file(
                filepath,
                WHAT,
                f"its {entry} holds arrays {few(sorted(npz.headers, key=lambda n: (len(n), n)))} "
                f"where its architecture has {len(weights):,} weights (w0 to w{len(weights) - 1})",
                REMEDY,
            )
        headers = [npz.headers[name] for name in names]
        check_fits(weights, headers, [f"{entry}/{name}" for name in names], filepath, WHAT, REMEDY, "load_model")
        return [npz.read(name) for name in names]


def _refuse_weight(filepath, stored):
    def refuse(weight_name, shape):
        raise bad_file(
            filepath,
            "model file",
            f"its architecture declares a weight {weight_name} of shape {shape} ({math.prod(shape):,} values), "
            f"more than its weights (model.weights.npz, {stored:,} bytes) hold",
            "load a file written by model.save",
        )

    return refuse


def _class_named(name, kind, known, custom_objects, filepath):
    cls = (custom_objects.get(name) or known.get(name)) if isinstance(name, str) else None
    if cls is None:
        raise bad_file(
            filepath,
            WHAT,
            f"it names an unknown {kind} class {str(name)[:80]!r}",
            f"if the class is yours, pass it in custom_objects={{{str(name)[:80]!r}: {str(name)[:80]}}}",
        )
    return cls


def _check_connections(architecture, filepath) -> None:
    """Each tensor is made by a layer of the file from tensors made before it, and the model's inputs
    and outputs are tensors of the file: a negative or later index would silently pick another one."""

    def indices(values, end):
        return isinstance(values, list) and all(type(i) is int and 0 <= i < end for i in values)

    tensors, layers = architecture["tensors"], architecture["layers"]
    bad = [
        position
        for position, entry in enumerate(tensors)
        if not (indices([entry["layer"]], len(layers)) and indices(entry["inputs"], position))
    ]
    if bad or not (indices(architecture["inputs"], len(tensors)) and indices(architecture["outputs"], len(tensors))):
        where = f"tensor {bad[0]}" if bad else "the model's inputs or outputs"
        raise bad_file(filepath, WHAT, f"{where} refers to a layer or tensor that is not in the file before it", REMEDY)


def _rebuild(architecture, custom_objects, filepath):
    from ..models import Model, Sequential

    _check_connections(architecture, filepath)
    known = config.known_classes(layers_module, layers_module.Layer)
    made = [
        None
        if entry["class_name"] == "InputLayer"
        else _class_named(entry["class_name"], "layer", known, custom_objects, filepath).from_config(entry["config"])
        for entry in architecture["layers"]
    ]
    if architecture["class_name"] == "Sequential":
        model = Sequential(name=architecture["name"])
        start = architecture["layers"][0]["config"]
        model.add(layers_module.Input(tuple(start["shape"]), name=start["name"]))
        for layer in made[1:]:
            model.add(layer)
        return model
    tensors, calls = [], {}
    for entry in architecture["tensors"]:
        spec = architecture["layers"][entry["layer"]]
        if spec["class_name"] == "InputLayer":
            tensors.append(layers_module.Input(tuple(spec["config"]["shape"]), name=spec["config"]["name"]))
            continue
        given = [tensors[i] for i in entry["inputs"]]
        layer = made[entry["layer"]]
        key = (entry["layer"], tuple(entry["inputs"]))  # the outputs of one call (LSTM's with its states)
        if key not in calls:
            calls[key] = layer(given if layer.multi_input else given[0])
        result, output = calls[key], entry.get("output", 0)
        if type(output) is not int or not 0 <= output < (len(result) if isinstance(result, list) else 1):
            raise bad_file(filepath, WHAT, f"a tensor names output {str(output)[:20]} of a layer without it", REMEDY)
        tensors.append(result[output] if isinstance(result, list) else result)
    inputs = [tensors[i] for i in architecture["inputs"]]
    outputs = [tensors[i] for i in architecture["outputs"]]
    return Model(
        inputs if len(inputs) > 1 else inputs[0], outputs if len(outputs) > 1 else outputs[0], name=architecture["name"]
    )


def _recompile(model, arguments, custom_objects, filepath):
    known_losses = config.known_classes(losses_module, losses_module.Loss)

    def loss_of(entry):
        if not isinstance(entry, dict) or "class_name" not in entry:
            return entry
        cls = _class_named(entry["class_name"], "loss", known_losses, custom_objects, filepath)
        return cls(**config.decode(entry["config"]))

    loss = arguments["loss"]
    loss = (
        {k: loss_of(v) for k, v in loss.items()}
        if isinstance(loss, dict) and "class_name" not in loss
        else [loss_of(v) for v in loss]
        if isinstance(loss, list)
        else loss_of(loss)
    )
    optimizer = arguments["optimizer"]
    known_optimizers = config.known_classes(optimizers_module, optimizers_module.Optimizer)
    optimizer = _class_named(
        optimizer["class_name"], "optimizer", known_optimizers, custom_objects, filepath
    ).from_config(optimizer["config"], custom_objects)  # a learning-rate schedule of one's own is found there too
    model.compile(
        optimizer,
        loss,
        metrics=keras_config.metrics_from_keras(arguments["metrics"], custom_objects),
        weighted_metrics=keras_config.metrics_from_keras(arguments.get("weighted_metrics"), custom_objects),
        loss_weights=arguments["loss_weights"],
        steps_per_execution=arguments["steps_per_execution"],
    )


_SLOT = re.compile(r"slot([0-9]+)/w([0-9]+)")


def _restore_optimizer(model, archive, filepath) -> None:
    """The optimizer's step count and slots (``slot<k>/w<i>``: slot k of weight i), each checked before
    it is kept: a negative step count would make Adam's next step NaN, a slot named for a weight that is
    not there would land on another, one of the wrong shape would fail inside ``fit``."""
    optimizer, weights, entry = model.optimizer, graph.first_use_weights(model), "optimizer.npz"
    sizes = [WIDEST_REAL_ITEMSIZE * math.prod(w.shape) for w in weights] * optimizer.slots_per_weight
    limit = npz_bound([WIDEST_REAL_ITEMSIZE, *sizes])
    with open_npz(read_zip_entry(archive, entry, limit, filepath, WHAT, REMEDY), WHAT, REMEDY, filepath) as npz:
        slots = {name: _SLOT.fullmatch(name) for name in npz.headers if name != "iterations"}
        strangers = [name for name, match in slots.items() if not match or int(match[2]) >= len(weights)]
        if strangers:
            raise bad_file(
                filepath,
                WHAT,
                f"its {entry} holds {few(strangers)}, which name no slot of its {len(weights)} weights",
                REMEDY,
            )
        slots = {name: (weights[int(match[2])], int(match[1])) for name, match in slots.items()}
        _check_slots(npz.headers, slots, optimizer, filepath, entry)
        iterations = npz.read("iterations")
        if iterations < 0:
            raise bad_file(
                filepath, WHAT, f"its {entry}/iterations is {int(iterations)}, not a step count (0 or more)", REMEDY
            )
        arrays = {name: npz.read(name) for name in slots}
    optimizer.iterations = int(iterations)
    for name, (weight, slot) in slots.items():
        optimizer._slots[(id(weight), slot)] = arrays[name]


def _check_slots(headers, slots, optimizer, filepath, entry) -> None:
    """The step count is an integer; each weight has at most the optimizer's number of slots, each of
    the weight's shape and floating point: from the headers, before anything is read."""
    count = headers.get("iterations")
    if count is None or count.shape != () or count.dtype.kind not in "iu":
        raise bad_file(filepath, WHAT, f"its {entry}/iterations is missing or not an integer", REMEDY)
    per_weight = collections.Counter(id(weight) for weight, _ in slots.values())
    for name, (weight, _) in slots.items():
        header = headers[name]
        if per_weight[id(weight)] > optimizer.slots_per_weight:
            problem = (
                f"it holds {per_weight[id(weight)]} slots for weight {weight.name}, "
                f"but {type(optimizer).__name__} keeps {optimizer.slots_per_weight}"
            )
        elif header.shape != tuple(weight.shape):
            problem = (
                f"{entry}/{name} has shape {header.shape}, not the shape {tuple(weight.shape)} of weight {weight.name}"
            )
        elif header.dtype.kind != "f":
            problem = f"{entry}/{name} holds {header.dtype} values, not floating-point numbers"
        else:
            continue
        raise bad_file(filepath, WHAT, problem, REMEDY)
