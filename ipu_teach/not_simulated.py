"""The error for a TensorFlow (or PyTorch) name ipu-teach does not simulate: it names the missing thing and says why.

``NotSimulatedError`` is an AttributeError so that ``hasattr`` and ``getattr(obj, name, default)``
still answer False / the default for it, as they would on TensorFlow for a name it lacks.
``NotSimulatedImportError`` is an ImportError but not a ModuleNotFoundError: Python's import system
swallows ModuleNotFoundError while resolving ``from package import name``, and would then raise its
own bare "cannot import name" error instead of this explanation.
"""

import difflib
import types

_WHY = (
    "ipu-teach simulates the part of TensorFlow 2 that Keras scripts for the IPU use (see the README's "
    "table 'What runs unchanged'); change the script to use what it has, or run it on TensorFlow"
)
_WHY_TORCH = (
    "ipu-teach simulates the part of PyTorch, torchvision and PopTorch that PopTorch scripts for the IPU use "
    "(ipu_teach.torch, ipu_teach.torchvision, ipu_teach.poptorch); change the script to use what it has, or run it "
    "on PyTorch"
)


def explain(name: str, known=()) -> str:
    """``'<name> is not simulated by ipu-teach: ...'``, with the closest of ``known`` names as a hint."""
    leaf = name.rsplit(".", 1)[-1]
    close = difflib.get_close_matches(leaf, [k for k in known if not k.startswith("_")], n=1)
    hint = f" Did you mean {shown_name(name.rsplit('.', 1)[0] + '.' + close[0])}?" if close and "." in name else ""
    why = _WHY_TORCH if name.partition(".")[0] in ("torch", "torchvision", "poptorch") else _WHY
    return f"{shown_name(name)} is not simulated by ipu-teach: {why}.{hint}"


def shown_name(name: str) -> str:
    """TensorFlow's documentation spells public names ``tf.x.y``; the ``tensorflow.python`` paths people import
    by their full name."""
    if name.startswith("tensorflow.") and not name.startswith("tensorflow.python"):
        return "tf." + name[len("tensorflow.") :]
    return name


class NotSimulatedError(AttributeError):
    """An attribute TensorFlow has and ipu-teach does not."""

    def __init__(self, name: str, known=()):
        super().__init__(explain(name, known))
        self.tf_name = name


class NotSimulatedImportError(ImportError):
    """A module (or a name imported from one) TensorFlow has and ipu-teach does not."""

    def __init__(self, name: str, known=()):
        super().__init__(explain(name, known), name=name)
        self.tf_name = name


class NotSimulatedModule(types.ModuleType):
    """A TensorFlow module ipu-teach does not simulate (``tf.linalg``): any name in it raises NotSimulatedError
    with its full name (``tf.linalg.svd``)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise NotSimulatedError(f"{self.__name__}.{name}")
