"""Real Keras' serialized configurations, translated to and from ipu-teach's layers.

A model saved by Keras (its HDF5 ``model_config``, a ``.keras`` file's ``config.json``) describes each
layer with Keras' full constructor arguments: every option spelled out (``kernel_regularizer: null``,
``dtype: "float32"``...) and initializers as ``{"class_name": "GlorotUniform", "config": {...}}``.
:func:`from_keras` turns such a configuration into the one ``Model.from_config`` reads: layer classes
are looked up among ipu-teach's layers (and the caller's ``custom_objects``) by Keras' class name, an
option ipu-teach's layer does not take is dropped when its value is Keras' "off" (None, False, 0,
``channels_last``...) and refused, naming the layer and option, when it asks for something the
simulator would silently not do. :func:`to_keras` is the way back, for files real Keras reads.

A Lambda layer carries Python bytecode: it is refused, never run (ipu-teach runs no code from a file).
"""

from __future__ import annotations

import inspect

from .. import initializers, learning_rate_schedule
from ..layers.base import Layer
from . import config, model_config

_NEUTRAL = {
    "data_format": ("channels_last",),
    "dilation_rate": (1, [1], [1, 1], (1, 1)),
    "groups": (1,),
    "implementation": (1, 2),  # LSTM / GRU kernels: the same numbers either way
    "dtype": ("float32",),
    "unit_forget_bias": (True,),
    "sparse": (False,),
}
"""Keras options whose value here means "as ipu-teach does anyway", beyond None, False and empty values."""

_MODELS = ("Functional", "Model", "Sequential")


def _accepted(cls) -> set | None:
    """The keyword arguments ``cls(...)`` takes, following ``**kwargs`` up to the base classes (a layer's end at
    ``Layer``, which refuses the rest); None when the last one still takes ``**kwargs`` (it checks them itself)."""
    names = set()
    for klass in cls.__mro__[:-1]:  # not object
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names |= {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in parameters) or klass is Layer:
            return names
    return None


def _is_neutral(option, value) -> bool:
    """None, False, 0 and empty values are Keras' "off" (no regularizer, no dropout, not stateful...)."""
    off = value is None or value is False or (type(value) in (int, float) and value == 0)
    return off or value == [] or value == {} or value in _NEUTRAL.get(option, ())


_INITIALIZER_FACTORIES = {
    name: value for name, value in vars(initializers).items() if name[:1].isupper() and callable(value)
}


def _initializer(entry, where):
    """Keras' ``{"class_name": "GlorotUniform", "config": {"seed": null}}`` as ipu-teach's initializer."""
    name = entry.get("class_name")
    factory = _INITIALIZER_FACTORIES.get(name) if isinstance(name, str) and name != "Initializer" else None
    if factory is None:
        raise ValueError(f"{where} uses the initializer {str(name)[:80]!r}, which ipu-teach does not have")
    return factory(**(entry.get("config") or {}))


def _refuse_code(entry) -> None:
    if entry.get("class_name") == "Lambda":
        name = (entry.get("config") or {}).get("name", "lambda")
        raise ValueError(
            f"Layer {str(name)[:80]!r} is a Lambda layer: its Python code is stored in the file, and ipu-teach "
            "never runs code read from a file (Keras refuses it too unless safe_mode=False). Build the model "
            "in Python, with that layer written as a layer class, and load the file's weights with "
            "model.load_weights"
        )


def _not_simulated(where, option, value, class_name) -> ValueError:
    return ValueError(
        f"{where} in the file sets {option}={str(value)[:80]}, which ipu-teach's {class_name} does not "
        f"simulate; the model would compute something else. Remove {option} (or set it to Keras' default)"
    )


_LAST_AXIS_LAYERS = ("BatchNormalization", "LayerNormalization")
"""Layers Keras saves with the axis they normalise counted from the front (``[3]``); ipu-teach's take -1."""


def _last_axis(keras_config, axes) -> None:
    """``axis: [k]`` becomes -1, and (layer name, k) is kept in ``axes`` to check once the layer knows its input."""
    axis = keras_config.get("axis", -1)
    if isinstance(axis, list) and len(axis) == 1:
        axis = axis[0]
    if isinstance(axis, int) and axis >= 0:
        axes.append((keras_config.get("name"), axis))
        keras_config["axis"] = -1


def _check_axes(model, axes) -> None:
    layers = {}
    stack = [model]
    while stack:
        for layer in stack.pop().layers:
            layers[layer.name] = layer
            if hasattr(layer, "_order"):
                stack.append(layer)
    for name, axis in axes:
        rank = len(layers[name].input_shape)
        if axis != rank - 1:
            raise ValueError(
                f"Layer {name!r} normalises axis {axis} of its {rank}-axis input; ipu-teach's "
                f"{type(layers[name]).__name__} normalises the last axis only (axis={rank - 1} here)"
            )


def _layer_from_keras(entry, custom_objects, axes) -> dict:
    """One layer's entry of a Keras configuration, with its ``config`` in ipu-teach's terms."""
    _refuse_code(entry)
    class_name, keras_config = entry.get("class_name"), dict(entry.get("config") or {})
    if class_name in _MODELS:
        return {**entry, "config": _model_config_from_keras(keras_config, custom_objects, axes)}
    if class_name in _LAST_AXIS_LAYERS:
        _last_axis(keras_config, axes)
    if class_name == "InputLayer":
        shape = keras_config.get("batch_input_shape", keras_config.get("batch_shape"))
        dtype = keras_config.get("dtype")
        kept = {"dtype": dtype} if isinstance(dtype, str) else {}  # the declared dtype (uint8 pixels, int32 ids)
        return {**entry, "config": {"batch_input_shape": shape, "name": keras_config["name"], **kept}}
    cls = model_config.layer_class(class_name, custom_objects)
    accepted = _accepted(cls) or set()
    where = f"Layer {str(keras_config.get('name'))[:80]!r} ({class_name})"
    translated = {}
    for option, value in keras_config.items():
        if isinstance(value, dict) and "class_name" in value and option.endswith("_initializer"):
            value = _initializer(value, where)
        elif option == "dtype" and isinstance(value, dict):  # a mixed-precision policy: its name
            value = (value.get("config") or {}).get("name")
        if option in accepted:
            translated[option] = value
        elif not _is_neutral(option, value):
            raise _not_simulated(where, option, value, class_name)
    if "batch_input_shape" in translated and "input_shape" in translated:
        del translated["input_shape"]
    return {**entry, "config": translated}


def _model_config_from_keras(keras_config, custom_objects, axes) -> dict:
    return {**keras_config, "layers": [_layer_from_keras(e, custom_objects, axes) for e in keras_config["layers"]]}


def from_keras(serialized, custom_objects=None):
    """A model made from Keras' ``{"class_name": "Functional" | "Sequential", "config": {...}}``."""
    from ..models import Model, Sequential

    custom_objects = custom_objects or {}
    class_name = serialized.get("class_name")
    if class_name not in _MODELS:
        raise ValueError(
            f"the file holds a model of class {str(class_name)[:80]!r}; ipu-teach reads Keras' Functional "
            "and Sequential models (a subclassed model's code is not in the file: build it in Python and "
            "load the weights with model.load_weights)"
        )
    cls, axes = (Sequential if class_name == "Sequential" else Model), []
    model = cls.from_config(_model_config_from_keras(serialized["config"], custom_objects, axes), custom_objects)
    _check_axes(model, axes)
    return model


def _keras_value(value):
    """ipu-teach's encoded configuration value as Keras writes it: initializers as class and config."""
    if isinstance(value, dict) and set(value) == {"initializer", "config"}:
        return {"class_name": value["initializer"], "config": _keras_value(value["config"])}
    if isinstance(value, dict):
        return {k: _keras_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_keras_value(v) for v in value]
    return value


def to_keras(model) -> dict:
    """``model``'s configuration as Keras' ``model_config``: ``{"class_name": ..., "config": ...}``."""
    return {"class_name": model_config.class_name(model), "config": _keras_value(model.get_config())}


_OPTIMIZER_NEUTRAL = {"is_legacy_optimizer", "jit_compile", "ema_momentum", "ema_overwrite_frequency", "decay"}
"""Keras' optimizer options that change nothing here (``decay`` only at 0, checked below)."""


def _keras_object(entry, known, kind, custom_objects, neutral=frozenset()):
    """An object of ``known`` (class name -> class) from Keras' ``{"class_name": ..., "config": {...}}``."""
    name = str(entry.get("class_name"))
    name = name.removeprefix("Custom>")  # tf-keras' prefix for its new optimizers
    cls = custom_objects.get(name) or known.get(name)
    if cls is None:
        raise ValueError(
            f"Unknown {kind}: {name[:80]!r}. ipu-teach has {', '.join(sorted(known))}; "
            f"pass your own in custom_objects={{{name[:80]!r}: ...}}"
        )
    accepted, arguments = _accepted(cls), {}
    for option, value in (entry.get("config") or {}).items():
        off = _is_neutral(option, value) or (option in neutral and (option != "decay" or value == 0))
        if (option in accepted) if accepted is not None else not off:
            arguments[option] = value
        elif not off:
            raise _not_simulated(f"The {kind} {name!r}", option, value, name)
    return cls(**arguments)


def metrics_from_keras(entries, custom_objects):
    """Keras' saved metrics (per output; a name, a ``MeanMetricWrapper`` or a class) as ``compile`` takes them."""
    from .. import metrics as metrics_module

    if entries is None:
        return None
    if isinstance(entries, dict) and "class_name" not in entries:  # by output name
        return {output: metrics_from_keras(e, custom_objects) for output, e in entries.items()}
    if all(isinstance(e, list) for e in entries):  # one list per output
        per_output = [metrics_from_keras(e, custom_objects) for e in entries]
        return per_output[0] if len(per_output) == 1 else per_output
    known = config.known_classes(metrics_module, metrics_module.Metric)
    made = []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("class_name") == "MeanMetricWrapper":
            entry = (entry.get("config") or {}).get("name")  # "accuracy", or the function's name
        made.append(entry if isinstance(entry, str) else _keras_object(entry, known, "metric", custom_objects))
    return made


def metrics_to_keras(metrics):
    """``compile``'s metrics as Keras saves them: names as given, a metric object by its class and
    ``get_config`` (``{"class_name": "AUC", "config": {...}}``); per output as given."""
    from .. import metrics as metrics_module

    if isinstance(metrics, metrics_module.Metric):
        return {"class_name": type(metrics).__name__, "config": config.encode(metrics.get_config())}
    if isinstance(metrics, dict):
        return {output: metrics_to_keras(entry) for output, entry in metrics.items()}
    if isinstance(metrics, (list, tuple)):
        return [metrics_to_keras(entry) for entry in metrics]
    return config.encode(metrics)


def compile_arguments(training_config, custom_objects=None) -> dict:
    """``compile``'s arguments from Keras' ``training_config`` (optimizer, loss, metrics by Keras' names)."""
    from .. import losses as losses_module
    from .. import optimizers as optimizers_module

    custom_objects = custom_objects or {}
    known_losses = config.known_classes(losses_module, losses_module.Loss)

    def loss_of(entry):
        return _keras_object(entry, known_losses, "loss", custom_objects) if isinstance(entry, dict) else entry

    loss = training_config.get("loss")
    if isinstance(loss, dict) and "class_name" not in loss:
        loss = {output: loss_of(entry) for output, entry in loss.items()}
    elif isinstance(loss, list):
        loss = [loss_of(entry) for entry in loss]
    else:
        loss = loss_of(loss)
    known_optimizers = config.known_classes(optimizers_module, optimizers_module.Optimizer)
    optimizer_entry = training_config["optimizer_config"]
    rate = (optimizer_entry.get("config") or {}).get("learning_rate")
    if isinstance(rate, dict):  # a schedule, perhaps of the caller's own class
        rate = learning_rate_schedule.deserialize(rate, custom_objects)
        optimizer_entry = {**optimizer_entry, "config": {**optimizer_entry["config"], "learning_rate": rate}}
    optimizer = _keras_object(optimizer_entry, known_optimizers, "optimizer", custom_objects, _OPTIMIZER_NEUTRAL)
    return {
        "optimizer": optimizer,
        "loss": loss,
        "metrics": metrics_from_keras(training_config.get("metrics"), custom_objects),
        "weighted_metrics": metrics_from_keras(training_config.get("weighted_metrics"), custom_objects),
        "loss_weights": training_config.get("loss_weights"),
    }


def training_config(model) -> dict:
    """``model``'s compile arguments as tf-keras writes ``training_config`` (``saving_utils.model_metadata``),
    the optimizer's as Keras 2.6's ``optimizer_v2`` gives it (with ``decay``), which tf-keras reads as a legacy
    optimizer, as ipu-teach's are."""
    from .. import losses as losses_module

    def loss_entry(loss):
        if isinstance(loss, losses_module.Loss):
            return {"class_name": type(loss).__name__, "config": _keras_value(config.encode(vars(loss)))}
        return loss if loss is None or isinstance(loss, str) else loss.__name__  # a Keras loss function

    given_loss, loss_weights, metrics = model.compiled_outputs._given
    if isinstance(given_loss, dict):
        loss = {output: loss_entry(v) for output, v in given_loss.items()}
    elif isinstance(given_loss, (list, tuple)):
        loss = [loss_entry(v) for v in given_loss]
    else:
        loss = loss_entry(given_loss)
    optimizer = model.optimizer
    return {
        "loss": loss,
        "metrics": metrics_to_keras(metrics),
        "weighted_metrics": metrics_to_keras(model.compiled_outputs.weighted_metrics_given),
        "loss_weights": loss_weights,
        "optimizer_config": {
            "class_name": type(optimizer).__name__,
            "config": {"decay": 0.0, **config.encode(optimizer.get_config())},
        },
    }


# ----- the ``.keras`` format's configuration (tf-keras ``serialization_lib``) ------------------------
_MODEL_MODULES = {"Functional": "keras.src.engine.functional", "Sequential": "keras"}
"""Where tf-keras finds a model class (it reads ``keras.`` as ``tf_keras.``)."""
_MODULE_BY_SUFFIX = {
    "_initializer": "keras.initializers",
    "_regularizer": "keras.regularizers",
    "_constraint": "keras.constraints",
}
_LAYER_KEYS = ("layer", "forward_layer", "backward_layer", "cell")


def _with_modules(entry, module: str):
    """A ``{"class_name", "config"}`` entry as Keras 2.13+ writes it, with the ``module`` tf-keras imports
    its class from and ``registered_name``, and the same for every object of its configuration."""
    if not (isinstance(entry, dict) and "class_name" in entry and "config" in entry):
        return entry
    if entry["class_name"] in _MODEL_MODULES:
        module = _MODEL_MODULES[entry["class_name"]]
    annotated = dict(entry["config"])
    for key, value in annotated.items():
        if key == "layers" and isinstance(value, list):
            annotated[key] = [_with_modules(layer, "keras.layers") for layer in value]
        elif key in _LAYER_KEYS:
            annotated[key] = _with_modules(value, "keras.layers")
        elif key == "learning_rate":
            annotated[key] = _with_modules(value, "keras.optimizers.schedules")
        else:
            suffix = next((s for s in _MODULE_BY_SUFFIX if key.endswith(s)), None)
            if suffix is not None:
                annotated[key] = _with_modules(value, _MODULE_BY_SUFFIX[suffix])
    registered = entry["class_name"] if entry["class_name"] == "Functional" else None
    return {"module": module, **entry, "config": annotated, "registered_name": registered}


def _metrics_with_modules(metrics):
    if isinstance(metrics, dict) and "class_name" not in metrics:
        return {output: _metrics_with_modules(entry) for output, entry in metrics.items()}
    if isinstance(metrics, list):
        return [_metrics_with_modules(entry) for entry in metrics]
    return _with_modules(metrics, "keras.metrics")


def to_keras_v3(model) -> dict:
    """``config.json`` of a ``.keras`` file: the model's configuration and, once compiled, its
    ``compile_config`` (the optimizer as Keras 2.6's, ``keras.optimizers.legacy`` in tf-keras)."""
    serialized = _with_modules(to_keras(model), "keras")
    if model.compiled:
        training = training_config(model)
        losses = training["loss"]

        def loss_entry(loss):
            return _with_modules(loss, "keras.losses")

        serialized["compile_config"] = {
            "optimizer": _with_modules(training["optimizer_config"], "keras.optimizers.legacy"),
            "loss": {k: loss_entry(v) for k, v in losses.items()}
            if isinstance(losses, dict) and "class_name" not in losses
            else [loss_entry(v) for v in losses]
            if isinstance(losses, list)
            else loss_entry(losses),
            "metrics": _metrics_with_modules(training["metrics"]),
            "loss_weights": training["loss_weights"],
            "weighted_metrics": _metrics_with_modules(training["weighted_metrics"]),
            "run_eagerly": None,
            "steps_per_execution": model.steps_per_execution,
            "jit_compile": None,
        }
    return serialized
