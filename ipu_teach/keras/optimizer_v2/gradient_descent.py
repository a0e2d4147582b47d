"""``keras.optimizer_v2.gradient_descent``: Keras 2.6's module of ``SGD`` (the class is ``keras.optimizers.SGD``)."""

from ..optimizers import SGD

__all__ = ["SGD"]
