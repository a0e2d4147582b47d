"""``keras.optimizer_v2.adadelta``: Keras 2.6's module of ``Adadelta`` (the class is ``keras.optimizers.Adadelta``)."""

from ..optimizers import Adadelta

__all__ = ["Adadelta"]
