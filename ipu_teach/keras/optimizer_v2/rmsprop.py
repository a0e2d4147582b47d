"""``keras.optimizer_v2.rmsprop``: Keras 2.6's module of ``RMSprop`` (the class is ``keras.optimizers.RMSprop``)."""

from ..optimizers import RMSprop

__all__ = ["RMSprop"]
