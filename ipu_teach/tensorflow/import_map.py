"""The import mapping that makes an unchanged TensorFlow 2 script import ipu-teach.

``ALIASES`` is the table (the README shows it too): each TensorFlow module name on the left stands
for the ipu-teach module on the right; ``None`` marks a name that only groups the ones below it.
A name not in the table is looked up in the module of its parent (``tensorflow.keras.layers`` is
``ipu_teach.keras.layers``, ``tensorflow.python.ipu.ops`` is ``ipu_teach.ipu.ops``).

``TensorFlowImports`` installs a meta-path finder for the duration of a run (``ipu-teach run``) and
removes it afterwards, with every module it made; importing ipu_teach never installs it. The
modules it hands out are thin stand-ins named as in TensorFlow that pass attribute lookups on to
the ipu-teach module, so that a name ipu-teach lacks fails with ``NotSimulatedError`` naming the
TensorFlow name (``tf.keras.layers.ConvLSTM2D``), also in ``from tensorflow.keras.layers import ConvLSTM2D``.
``keras`` is mapped as well: Graphcore's SDK shipped its Keras 2.6 as a separate ``keras`` wheel, and its IPU
Keras layers as ``ipu_tensorflow_addons``.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

from ..not_simulated import NotSimulatedError, NotSimulatedImportError

ALIASES = {
    "tensorflow": "ipu_teach.tensorflow",
    "tensorflow.keras": "ipu_teach.keras",
    "tensorflow.python": None,
    "tensorflow.python.keras": "ipu_teach.keras",
    "tensorflow.python.ipu": "ipu_teach.ipu",
    "tensorflow.python.ipu.keras": "ipu_teach.keras.ipu",
    "tensorflow.python.data": "ipu_teach.tensorflow.data",
    "tensorflow.python.data.ops": None,
    "tensorflow.python.data.ops.dataset_ops": "ipu_teach.data.dataset",
    "tensorflow.python.training": "ipu_teach.tensorflow.training",
    "keras": "ipu_teach.keras",
    "ipu_tensorflow_addons": "ipu_teach.ipu.ipu_tensorflow_addons",
    "torch": "ipu_teach.torch",
    "torchvision": "ipu_teach.torchvision",
    "poptorch": "ipu_teach.poptorch",
}
UNSIMULATED_ROOTS = frozenset({"popdist"})
"""Graphcore packages scripts import that ipu-teach does not simulate (PopDist, the multi-host launcher's
library): importing them, or anything in them, is a NotSimulatedImportError naming it, not Python's
ModuleNotFoundError."""
ROOTS = frozenset(name.partition(".")[0] for name in ALIASES) | UNSIMULATED_ROOTS


class _NotAModule:
    """What ``target_of`` answers for a name that is an attribute but not a module (``tensorflow.keras.Model``)."""


def target_of(name):
    """The ipu-teach module TensorFlow module ``name`` stands for; None for a grouping name of the table;
    ``_NotAModule`` for a non-module attribute. Raises NotSimulatedImportError when ipu-teach has no such name."""
    if name.partition(".")[0] in UNSIMULATED_ROOTS:
        raise NotSimulatedImportError(name)
    if name in ALIASES:
        return None if ALIASES[name] is None else importlib.import_module(ALIASES[name])
    parent, _, leaf = name.rpartition(".")
    if not parent:
        raise NotSimulatedImportError(name)
    owner = target_of(parent)
    if owner is None or owner is _NotAModule:
        raise NotSimulatedImportError(name, _children(parent))
    try:
        value = getattr(owner, leaf)
    except AttributeError:
        value = _submodule(owner, leaf)
        if value is None:
            raise NotSimulatedImportError(name, dir(owner)) from None
    return value if isinstance(value, types.ModuleType) else _NotAModule


def _submodule(owner, leaf):
    """``owner.leaf`` when it is a module of the package not imported yet, else None."""
    if not hasattr(owner, "__path__") or importlib.util.find_spec(f"{owner.__name__}.{leaf}") is None:
        return None
    return importlib.import_module(f"{owner.__name__}.{leaf}")


def _children(name):
    return [key[len(name) + 1 :].partition(".")[0] for key in ALIASES if key.startswith(name + ".")]


class TensorFlowModule(types.ModuleType):
    """A stand-in named like the TensorFlow module; its names come from the ipu-teach module it maps to."""

    def __getattr__(self, name):
        child = f"{self.__name__}.{name}"
        if name.startswith("__") and name.endswith("__"):  # Python and tools probe these; they are not TF names
            target = target_of(self.__name__)
            if target is not None and hasattr(target, name):
                return getattr(target, name)
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        try:
            found = target_of(child)
        except NotSimulatedImportError:
            raise NotSimulatedError(child, self.__dir__()) from None
        if found is _NotAModule:
            return getattr(target_of(self.__name__), name)
        return importlib.import_module(child)

    def __dir__(self):
        target = target_of(self.__name__)
        return sorted(set(_children(self.__name__)) | set(dir(target) if target is not None else ()))

    def __repr__(self):
        target = target_of(self.__name__)
        return f"<module {self.__name__!r} (ipu-teach: {target.__name__ if target else 'a namespace'})>"


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds every module under the mapped roots and makes its TensorFlowModule."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in ROOTS:
            return None
        if target_of(fullname) is _NotAModule:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        return TensorFlowModule(spec.name, f"ipu-teach's stand-in for {spec.name}")

    def exec_module(self, module):
        """Nothing to run: the names come from the ipu-teach module on lookup."""


class TensorFlowImports:
    """A context in which ``import tensorflow`` (and ``keras``) give ipu-teach; everything is put back after."""

    def __enter__(self):
        self._finder = _Finder()
        self._saved = {name: module for name, module in sys.modules.items() if name.partition(".")[0] in ROOTS}
        for name in self._saved:
            del sys.modules[name]
        sys.meta_path.insert(0, self._finder)
        return self

    def __exit__(self, *exc):
        sys.meta_path.remove(self._finder)
        for name in [name for name in sys.modules if name.partition(".")[0] in ROOTS]:
            del sys.modules[name]
        sys.modules.update(self._saved)
        return False
