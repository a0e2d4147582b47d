"""What the ``tf`` functions return: ``EagerTensor`` (``ipu_teach/eager.py``), and the conversions they share."""

import numpy as np

from ..eager import EagerTensor, tensor  # noqa: F401  (the tf modules import them from here)


def python_default(value, dtype=None) -> EagerTensor:
    """Like ``tensor``, with TensorFlow's defaults for Python numbers: floats become float32, ints int32
    (numpy would make both 64-bit). Arrays and tensors keep their dtype."""
    if dtype is None and not hasattr(value, "dtype"):
        kind = np.asarray(value).dtype.kind
        dtype = {"f": "float32", "i": "int32"}.get(kind)
    return tensor(value, dtype)


def dimensions(shape) -> tuple:
    """A shape given as a list, a tuple, a number or a 1-D tensor of dimensions, as a tuple of ints."""
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))
