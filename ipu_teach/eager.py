"""The eager tensor of ipu-teach's ``tf`` functions and outfeeds: a numpy array that also answers TensorFlow's
``.numpy()``. Shared, so the IPU layer's outfeed queues give what TensorFlow's give without importing the ``tf``
namespace above them.

Eager TensorFlow tensors are read with ``.numpy()``; ipu-teach's already are numpy arrays, so the
class only adds that method. Datasets and Keras convert them to plain arrays as they take them in.
"""

import numpy as np

from .dtypes import as_dtype


class EagerTensor(np.ndarray):
    """A numpy array with ``.numpy()``, as ``tf.constant`` and the other ``tf`` functions return."""

    def numpy(self) -> np.ndarray:
        return np.asarray(self)


def tensor(value, dtype=None) -> EagerTensor:
    """``value`` as an EagerTensor (of ``dtype``, a TF dtype or anything numpy accepts, when given)."""
    array = np.asarray(value) if dtype is None else np.asarray(value, dtype=as_dtype(dtype).dtype)
    return array.view(EagerTensor)


def python_default(value, dtype=None) -> EagerTensor:
    """Like ``tensor``, with TensorFlow's defaults for Python numbers: floats become float32, ints int32
    (numpy would make both 64-bit). Arrays and tensors keep their dtype."""
    if dtype is None and not hasattr(value, "dtype"):
        kind = np.asarray(value).dtype.kind
        dtype = {"f": "float32", "i": "int32"}.get(kind)
    return tensor(value, dtype)
