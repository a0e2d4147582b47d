"""``keras.optimizer_v2.adamax``: Keras 2.6's module of ``Adamax`` (the class is ``keras.optimizers.Adamax``)."""

from ..optimizers import Adamax

__all__ = ["Adamax"]
