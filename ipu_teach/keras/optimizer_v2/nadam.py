"""``keras.optimizer_v2.nadam``: Keras 2.6's module of ``Nadam`` (the class is ``keras.optimizers.Nadam``)."""

from ..optimizers import Nadam

__all__ = ["Nadam"]
