"""Layer configurations: the arguments a layer was made with, as JSON, so a saved model can be made
again (``get_config`` / ``from_config``). Every layer records them when constructed, so layers
(including a user's own) need no hand-written ``get_config``.
"""

import functools
import inspect

from .. import activations, initializers, regularizers


def recording_arguments(init):
    """Wrap ``__init__`` to keep the arguments of the outermost call (the class actually made)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if "_init_arguments" not in self.__dict__:
            bound = signature.bind(self, *args, **kwargs)
            arguments = {}
            for name, value in list(bound.arguments.items())[1:]:
                if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                    arguments.update(value)
                elif signature.parameters[name].kind is not inspect.Parameter.VAR_POSITIONAL:
                    arguments[name] = value
            self.__dict__["_init_arguments"] = arguments
        init(self, *args, **kwargs)

    return __init__


def encode(value):
    """JSON for a configuration value: activations by name, initializers as class and arguments."""
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    if isinstance(value, regularizers.Regularizer):
        return regularizers.serialize(value)  # Keras' form; the layer's regularizers.get reads it back
    if isinstance(value, initializers.Initializer):
        return {"initializer": type(value).__name__, "config": encode(vars(value))}
    if callable(value) and activations.serialize(value) in activations.names():
        return activations.serialize(value)
    raise ValueError(
        f"Cannot save {value!r} in a model's configuration: ipu-teach saves names, numbers and "
        "keras initializers and regularizers; pass an activation or initializer by its name"
    )


def known_classes(module, base) -> dict:
    """The classes a file may name: those ``module`` exports that are ``base``'s subclasses. A name read
    from a file is only ever looked up here, never with getattr (which would find ``__class__``)."""
    return {name: value for name, value in vars(module).items() if isinstance(value, type) and issubclass(value, base)}


def decode(value):
    """The configuration value ``encode`` wrote; initializers are made from ``keras.initializers``' classes."""
    if isinstance(value, dict) and set(value) == {"initializer", "config"}:
        name = value["initializer"]
        cls = known_classes(initializers, initializers.Initializer).get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"unknown initializer class {str(name)[:80]!r}")
        return cls(**decode(value["config"]))
    if isinstance(value, dict):
        return {k: decode(v) for k, v in value.items()}
    return value
