"""``tf.data`` for ipu-teach: ``import ipu_teach as tf; tf.data.Dataset.from_tensor_slices((x, y)).batch(64)``."""

from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset"]
