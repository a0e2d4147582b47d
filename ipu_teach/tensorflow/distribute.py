"""``tf.distribute``: the names custom training loops use with ``strategy.reduce``.

The strategy itself is Graphcore's ``ipu.ipu_strategy.IPUStrategy``; of ``tf.distribute`` ipu-teach has
``ReduceOp`` (for ``strategy.reduce``) and ``get_strategy``/``has_strategy``. Other names raise
``NotSimulatedError`` naming them.

Example:

>>> import ipu_teach.tensorflow as tf
>>> tf.distribute.ReduceOp.SUM.name, tf.distribute.has_strategy()
('SUM', False)
"""

import enum

from ..keras.engine import device
from ..not_simulated import NotSimulatedError


class ReduceOp(enum.Enum):
    """How ``strategy.reduce`` combines values: their sum or their mean."""

    SUM = "SUM"
    MEAN = "MEAN"


def has_strategy() -> bool:
    """Whether this thread is in a strategy's scope."""
    return device.current() is not None


def get_strategy():
    """The strategy whose scope this thread is in (an ``IPUStrategy``); outside any scope TensorFlow's default
    strategy, which ipu-teach does not have."""
    strategy = device.current()
    if strategy is None:
        raise NotSimulatedError("tensorflow.distribute.get_strategy (outside an IPUStrategy scope)")
    return strategy


def __getattr__(name):
    raise NotSimulatedError(f"tensorflow.distribute.{name}", globals())
