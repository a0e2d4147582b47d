"""``tf.experimental``: of it ipu-teach has ``tf.experimental.numpy``'s array helpers; other names raise
``NotSimulatedError`` naming them."""

from ...not_simulated import NotSimulatedError
from . import numpy


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.experimental.{name}", globals())
