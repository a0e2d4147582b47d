"""``keras.optimizer_v2.optimizer_v2``: Keras 2.6's module of ``OptimizerV2`` (``keras.optimizers.Optimizer``)."""

from ..optimizers import OptimizerV2

__all__ = ["OptimizerV2"]
