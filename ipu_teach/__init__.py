"""ipu-teach: learn how a Graphcore IPU is programmed, on any laptop, with a simulated IPU in numpy.

Sub-packages load on first use, so ``import ipu_teach as tf; tf.data.Dataset`` and
``import ipu_teach.keras as keras`` cost only what they touch.
"""
import importlib

__version__ = "0.1.0"

_SUBPACKAGES = ("autograd", "bsp", "data", "hardware", "ipu", "keras", "pipeline", "profiling", "widgets")


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ipu_teach' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBPACKAGES))
