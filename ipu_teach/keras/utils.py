"""``keras.utils``: to_categorical, set_random_seed and Sequence."""
import numpy as np

from . import backend
from .data_utils import Sequence  # noqa: F401 (keras.utils.Sequence)


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot encode integer class labels (a new array; ``y`` is left as it is)."""
    y = np.asarray(y)
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError("to_categorical expects integer class labels, got non-integer values")
    y = y.astype(np.int64)
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must be in [0, {num_classes}), got values from {y.min()} to {y.max()}")
    out = np.zeros(y.shape + (num_classes,), dtype=dtype)
    np.put_along_axis(out, y[..., None], 1, axis=-1)
    return out


def set_random_seed(seed: int) -> None:
    """Seed weight initialisation, dropout and shuffling (``keras.utils.set_random_seed``)."""
    backend.set_random_seed(seed)
