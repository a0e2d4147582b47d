"""``model.save`` / ``keras.models.load_model``: a whole model in one zip file, without pickle.

The zip holds ``config.json`` (the architecture: every layer's class and arguments, and how the
layers connect; the compile arguments), ``model.weights.npz`` (every weight, in model order) and
``optimizer.npz`` (its step count and state per weight), as Keras 3's ``.keras`` format holds a
config and weights. Loading makes the layers again, reconnects them, sets the weights and, for a
compiled model, compiles it and restores the optimizer, so training continues where it stopped.
"""

import io
import json
import math
import os
import zipfile

import numpy as np

from ...atomic import atomic_write
from ...validation import bad_file
from .. import layers as layers_module
from .. import losses as losses_module
from .. import optimizers as optimizers_module
from ..layers.base import InputLayer
from . import config, weight_budget

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
        "tensors": [{"layer": layer_index[id(t.layer)], "inputs": [index[id(p)] for p in t.inputs]} for t in order],
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
        "metrics": config.encode(metrics),
        "weighted_metrics": config.encode(outputs.weighted_metrics_given),
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
    weights = {f"w{i}": w for i, w in enumerate(model.get_weights())}
    with atomic_write(filepath, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("config.json", json.dumps(description, indent=1))
        archive.writestr("model.weights.npz", _arrays_bytes(weights))
        if model.compiled:
            archive.writestr("optimizer.npz", _arrays_bytes(_optimizer_state(model)))


def _optimizer_state(model) -> dict:
    optimizer, state = model.optimizer, {"iterations": np.array(model.optimizer.iterations)}
    for i, weight in enumerate(model.weights):
        for (key, slot), value in optimizer._slots.items():
            if key == id(weight):
                state[f"slot{slot}/w{i}"] = value
    return state


def _load_arrays(archive, name) -> dict:
    with np.load(io.BytesIO(archive.read(name)), allow_pickle=False) as data:
        return {k: data[k] for k in data.files}


def load_model(filepath, custom_objects=None, compile=True):
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"load_model: no such file {filepath!r}")
    if not zipfile.is_zipfile(filepath):
        raise ValueError(f"load_model: {filepath!r} is not a model saved by model.save (not a zip file)")
    with zipfile.ZipFile(filepath) as archive:
        description = json.loads(archive.read("config.json")) if "config.json" in archive.namelist() else {}
        if description.get("format") != FORMAT:
            raise ValueError(f"load_model: {filepath!r} is not a model saved by ipu-teach's model.save")
        stored = archive.getinfo("model.weights.npz").file_size
        weights = _load_arrays(archive, "model.weights.npz")
        optimizer_state = _load_arrays(archive, "optimizer.npz") if "optimizer.npz" in archive.namelist() else None
    with weight_budget.limited_to(stored, _refuse_weight(filepath, stored)):
        model = _rebuild(description["model"], custom_objects or {})
    model.set_weights([weights[f"w{i}"] for i in range(len(weights))])
    if compile and description["compile"] is not None:
        _recompile(model, description["compile"], custom_objects or {})
        if optimizer_state is not None:
            _restore_optimizer(model, optimizer_state)
    return model


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


def _layer_class(name, custom_objects):
    cls = custom_objects.get(name) or getattr(layers_module, name, None)
    if cls is None:
        raise ValueError(f"load_model: unknown layer class {name!r}; pass it in custom_objects={{{name!r}: {name}}}")
    return cls


def _rebuild(architecture, custom_objects):
    from ..models import Model, Sequential

    made = [
        None
        if entry["class_name"] == "InputLayer"
        else _layer_class(entry["class_name"], custom_objects).from_config(entry["config"])
        for entry in architecture["layers"]
    ]
    if architecture["class_name"] == "Sequential":
        model = Sequential(name=architecture["name"])
        start = architecture["layers"][0]["config"]
        model.add(layers_module.Input(tuple(start["shape"]), name=start["name"]))
        for layer in made[1:]:
            model.add(layer)
        return model
    tensors = []
    for entry in architecture["tensors"]:
        spec = architecture["layers"][entry["layer"]]
        if spec["class_name"] == "InputLayer":
            tensors.append(layers_module.Input(tuple(spec["config"]["shape"]), name=spec["config"]["name"]))
            continue
        given = [tensors[i] for i in entry["inputs"]]
        layer = made[entry["layer"]]
        tensors.append(layer(given if layer.multi_input else given[0]))
    inputs = [tensors[i] for i in architecture["inputs"]]
    outputs = [tensors[i] for i in architecture["outputs"]]
    return Model(
        inputs if len(inputs) > 1 else inputs[0], outputs if len(outputs) > 1 else outputs[0], name=architecture["name"]
    )


def _recompile(model, arguments, custom_objects):
    def loss_of(entry):
        if not isinstance(entry, dict) or "class_name" not in entry:
            return entry
        cls = custom_objects.get(entry["class_name"]) or getattr(losses_module, entry["class_name"])
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
    optimizer = getattr(optimizers_module, optimizer["class_name"])(**optimizer["config"])
    model.compile(
        optimizer,
        loss,
        metrics=arguments["metrics"],
        weighted_metrics=arguments.get("weighted_metrics"),
        loss_weights=arguments["loss_weights"],
        steps_per_execution=arguments["steps_per_execution"],
    )


def _restore_optimizer(model, state):
    optimizer = model.optimizer
    optimizer.iterations = int(state.pop("iterations"))
    for key, value in state.items():
        slot, weight = key.split("/")
        optimizer._slots[(id(model.weights[int(weight[1:])]), int(slot[4:]))] = value.copy()
