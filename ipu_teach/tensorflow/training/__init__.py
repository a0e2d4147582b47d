"""``tensorflow.python.training``: TensorFlow 1's training module, of which ipu-teach has the optimizer base class
scripts subclass (``from tensorflow.python.training.optimizer import Optimizer``); other names raise
``NotSimulatedError`` naming them."""

from ...not_simulated import NotSimulatedError
from . import optimizer


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.python.training.{name}", globals())
