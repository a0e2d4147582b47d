"""``tf.data.experimental``: where TensorFlow 2.6 scripts find ``AUTOTUNE`` and the cardinality constants."""

from ...data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from ...data.options import AutoShardPolicy


def cardinality(dataset):
    """``tf.data.experimental.cardinality(dataset)``: the same as ``dataset.cardinality()``."""
    return dataset.cardinality()


__all__ = ["AUTOTUNE", "AutoShardPolicy", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality"]
