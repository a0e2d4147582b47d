"""ipu-teach: learn how a Graphcore IPU is programmed, on any laptop, with a simulated IPU in numpy.

Sub-packages load on first use, so ``import ipu_teach as tf; tf.data.Dataset`` and
``import ipu_teach.keras as keras`` cost only what they touch. ``ipu_teach.reset_session()`` puts every
process-wide setting back as a new Python process starts (see ``ipu_teach.session``).

Example:

>>> import ipu_teach
>>> import ipu_teach.keras as keras        # was: import tensorflow.keras as keras
>>> from ipu_teach import ipu              # was: from tensorflow.python import ipu
>>> keras.layers.Dense(1).name
'dense'
>>> ipu_teach.reset_session()              # as a new Python process: layer names start again
>>> keras.layers.Dense(1).name
'dense'
"""

import importlib

from .session import reset_session

__version__ = "0.1.0"

_SUBPACKAGES = ("autograd", "bsp", "data", "hardware", "ipu", "keras", "pipeline", "profiling", "widgets")


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ipu_teach' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_SUBPACKAGES))
