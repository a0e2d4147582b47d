"""``tf.compat.v1``: ``get_default_graph`` (Keras layers read its ``name``; Graphcore's inspecting-tensors example
skips its outfeed in Keras' ``_scratch_graph``) and ``train.Optimizer``. TensorFlow 1's sessions, placeholders and
the rest raise ``NotSimulatedError`` naming them.

Example:

>>> import ipu_teach.tensorflow as tf
>>> tf.compat.v1.get_default_graph().name
''
"""

import types

from ...keras.engine import call_context
from ...not_simulated import NotSimulatedError
from ..training.optimizer import Optimizer


class Graph:
    """The graph a TensorFlow call would be building here: ``name`` is the graph's name."""

    def __init__(self, name):
        self.name = name


def get_default_graph() -> Graph:
    """The graph TensorFlow would be building: while Keras calls a layer to learn its output shape, its
    ``<layer>_scratch_graph``, and while the IPU compiler traces a step, ``train_function`` (or ``test_``,
    ``predict_``); elsewhere a graph named "" (ipu-teach runs every call eagerly; TensorFlow's eager graph has no
    name and its ``tf.function`` graphs are named after their functions)."""
    return Graph(call_context.tracing() or "")


train = types.SimpleNamespace(Optimizer=Optimizer)


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.compat.v1.{name}", globals())
