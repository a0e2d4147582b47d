"""``keras.optimizer_v2``: Keras 2.6's module path of its optimizers (``from keras.optimizer_v2 import adam``,
``optimizer_v2.OptimizerV2``, ``learning_rate_schedule.PolynomialDecay``), as Graphcore's Keras code imports
them. Each submodule names the classes of ``keras.optimizers``; nothing is defined twice.

Example:

>>> from ipu_teach.keras.optimizer_v2 import adam, optimizer_v2
>>> adam.Adam is keras.optimizers.Adam, optimizer_v2.OptimizerV2 is keras.optimizers.Optimizer
(True, True)
"""

from .. import learning_rate_schedule
from . import adadelta, adagrad, adam, adamax, ftrl, gradient_descent, nadam, optimizer_v2, rmsprop

__all__ = [
    "adadelta",
    "adagrad",
    "adam",
    "adamax",
    "ftrl",
    "gradient_descent",
    "learning_rate_schedule",
    "nadam",
    "optimizer_v2",
    "rmsprop",
]
