"""``tf.compat``: of it ipu-teach has ``tf.compat.v1.get_default_graph`` (see ``compat.v1``); TensorFlow 1's
sessions and the rest raise ``NotSimulatedError`` naming them."""

from ...not_simulated import NotSimulatedError
from . import v1


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.compat.{name}", globals())
