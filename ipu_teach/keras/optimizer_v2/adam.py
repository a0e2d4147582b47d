"""``keras.optimizer_v2.adam``: Keras 2.6's module of ``Adam`` (the class is ``keras.optimizers.Adam``)."""

from ..optimizers import Adam

__all__ = ["Adam"]
