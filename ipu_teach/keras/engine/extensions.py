"""Model extensions: how another package adds methods to ``keras.Model`` by design.

This is how ``model.set_pipelining_options`` and Graphcore's other IPU methods exist. A package
writes an *extension*, a plain class whose methods take the model as ``self`` and whose ``__init__(self)``
gives each model its own state, and registers it for a model class::

    register_model_extension(keras.Model, ModelExtension)      # ipu_teach.ipu does this on import

Every model of that class (or a subclass) *built afterwards* is an instance of a class made of
(its class, the extension): ``model.set_pipelining_options(...)`` is an ordinary method,
``isinstance(model, ModelExtension)`` holds, ``type(model).__name__`` is still "Model" or
"Sequential", and the extension's ``__init__`` runs on each model after Keras' own. Keras never imports
the package that registers (``keras/`` does not import ``ipu/``).

This follows Graphcore's Keras: keras/ipu/extensions/model_extensions.py (``ModelExtension``),
functional_extensions.py and sequential_extensions.py are registered by
keras/ipu/extensions/register_extensions.py with TensorFlow's manager (graphcore/tensorflow
tensorflow/python/ipu/keras_extensions.py), and ``KerasExtensions._patch_keras_extension`` turns a model
into ``type(name, (its class, extension), {})``, keeping the name because Keras checks ``__name__``.
There the IPUStrategy applies it to models built in its scope; here a model gains the registered
extensions when it is built, in a scope or not (see ``ipu_teach.ipu.keras_extensions`` for why).

A name an extension will provide can be *announced* (``announce``) by the Keras code that knows of it,
so that a model without it says how to get it instead of a bare AttributeError.
"""

from __future__ import annotations

_registered: dict[type, list[type]] = {}
"""Model class -> the extensions registered for it, in registration order."""
_composed: dict[tuple, type] = {}
"""(model class, extensions) -> the class their models are instances of, made once."""
_announced: dict[str, str] = {}
"""Method name -> how to get it, for a model that does not have it."""


def register_model_extension(model_class: type, extension: type) -> None:
    """Models of ``model_class`` (and its subclasses) built from now on gain ``extension``'s methods.

    An extension adds methods; it may not hide one the model class has (Keras' ``fit`` stays Keras')."""
    hidden = sorted(name for name in _public_names(extension) if hasattr(model_class, name))
    if hidden:
        raise ValueError(
            f"{extension.__qualname__} cannot extend {model_class.__name__}: {', '.join(hidden)} "
            f"{'is' if len(hidden) == 1 else 'are'} already {model_class.__name__}'s; an extension adds "
            "methods and cannot replace Keras' own, so rename them"
        )
    extensions = _registered.setdefault(model_class, [])
    if extension not in extensions:
        extensions.append(extension)


def unregister_model_extension(model_class: type, extension: type) -> None:
    """Models built from now on no longer gain ``extension``; those already built keep it."""
    extensions = _registered.get(model_class, [])
    if extension in extensions:
        extensions.remove(extension)


def extensions_for(model_class: type) -> tuple:
    """The extensions a model of ``model_class`` gains: those registered for it and for its bases, most
    specific first, leaving out one that another listed extension already inherits from."""
    model_class = _unextended(model_class)
    found = [e for cls in model_class.__mro__ for e in _registered.get(cls, ())]
    unique = list(dict.fromkeys(found))
    return tuple(e for e in unique if not any(other is not e and issubclass(other, e) for other in unique))


def extended_class(model_class: type) -> type:
    """The class a model of ``model_class`` is built as: ``model_class`` with its extensions, if any."""
    model_class = _unextended(model_class)
    extensions = extensions_for(model_class)
    if not extensions:
        return model_class
    key = (model_class, extensions)
    if key not in _composed:
        _composed[key] = _compose(model_class, extensions)
    return _composed[key]


def _unextended(model_class: type) -> type:
    """The class a composed class was made from (a model's ``type`` may be one)."""
    return vars(model_class).get("_extended_model_class", model_class)


def _compose(model_class: type, extensions: tuple) -> type:
    def __init__(self, *args, **kwargs):
        model_class.__init__(self, *args, **kwargs)
        for extension in extensions:
            extension.__init__(self)

    namespace = {
        "__init__": __init__,
        "_extended_model_class": model_class,
        "__module__": model_class.__module__,
        "__qualname__": model_class.__qualname__,
        "__doc__": model_class.__doc__,
    }
    return type(model_class.__name__, (model_class, *extensions), namespace)


def announce(names, how_to_get: str) -> None:
    """Say how a model gains the methods ``names`` (an extension not registered yet will provide them)."""
    for name in names:
        _announced[name] = how_to_get


def missing_attribute(model, name: str) -> AttributeError:
    """The AttributeError for ``model.name``, saying how to get ``name`` when an extension provides it."""
    message = f"'{type(model).__name__}' object has no attribute '{name}'"
    provider = next((e for e in extensions_for(type(model)) if hasattr(e, name)), None)
    if provider is not None:
        built = vars(model).get("name", "this model")
        message += (
            f": `{name}` comes from {provider.__module__}.{provider.__qualname__}, registered after model "
            f"`{built}` was built; a model gains an extension's methods when it is built, so build the "
            "model again"
        )
    elif name in _announced:
        message += f": {_announced[name]}"
    return AttributeError(message)


def _public_names(extension: type) -> list:
    return [name for cls in extension.__mro__[:-1] for name in vars(cls) if not name.startswith("_")]
