"""``keras.optimizer_v2.adagrad``: Keras 2.6's module of ``Adagrad`` (the class is ``keras.optimizers.Adagrad``)."""

from ..optimizers import Adagrad

__all__ = ["Adagrad"]
