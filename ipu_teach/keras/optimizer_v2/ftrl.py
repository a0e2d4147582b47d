"""``keras.optimizer_v2.ftrl``: Keras 2.6's module of ``Ftrl`` (the class is ``keras.optimizers.Ftrl``)."""

from ..optimizers import Ftrl

__all__ = ["Ftrl"]
