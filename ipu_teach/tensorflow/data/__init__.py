"""``tf.data``: ipu-teach's Dataset (``ipu_teach.data``), ``AUTOTUNE``, ``Options`` and ``tf.data.experimental``.

Example:

>>> import ipu_teach.tensorflow as tf
>>> dataset = tf.data.Dataset.from_tensor_slices(np.arange(6)).batch(4, drop_remainder=True)
>>> [batch.tolist() for batch in dataset.prefetch(tf.data.AUTOTUNE)]
[[0, 1, 2, 3]]
"""

from ...data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from ...data.options import Options
from . import experimental

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "Options", "experimental"]
