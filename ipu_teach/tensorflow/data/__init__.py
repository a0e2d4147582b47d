"""``tf.data``: ipu-teach's Dataset (``ipu_teach.data``), ``AUTOTUNE``, ``Options`` and ``tf.data.experimental``."""

from ...data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from ...data.options import Options
from . import experimental

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "Options", "experimental"]
