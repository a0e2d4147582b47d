"""``keras.utils``: to_categorical, set_random_seed and Sequence.

Example:

>>> keras.utils.to_categorical([1, 0], 2)
array([[0., 1.],
       [1., 0.]], dtype=float32)
"""

import numpy as np

from . import backend
from .data_utils import Sequence  # noqa: F401 (keras.utils.Sequence)
from .engine.step_overrides import unpack_x_y_sample_weight  # noqa: F401 (for a train_step of one's own)


def to_categorical(y, num_classes=None, dtype="float32"):
    """Converts a class vector (integers) to a binary class matrix (one-hot), e.g. for ``categorical_crossentropy``.

    Returns a new array; ``y`` is left as it is.

    Args:
      y: Array-like of class values to be converted, integers from 0 to ``num_classes - 1``.
      num_classes: Total number of classes. Default: None, ``max(y) + 1``.
      dtype: The data type of the result. Default: ``"float32"``.

    Returns:
      A binary matrix representation of the input, the classes along the last axis.

    Raises:
      ValueError: for labels that are not whole numbers, negative, or not below ``num_classes``.

    Example:

    >>> keras.utils.to_categorical([0, 2, 1], num_classes=3)
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 1., 0.]], dtype=float32)
    """
    y = np.asarray(y)
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError("to_categorical expects integer class labels, got non-integer values")
    y = y.astype(np.int64)
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y.reshape(y.shape[:-1])
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(
            f"to_categorical: labels must be in [0, {num_classes}), got values from {y.min()} to {y.max()}"
        )
    out = np.zeros(y.shape + (num_classes,), dtype=dtype)
    np.put_along_axis(out, y[..., None], 1, axis=-1)
    return out


def set_random_seed(seed: int) -> None:
    """Sets all random seeds for the program: weight initialisation, dropout and ``fit``'s shuffling.

    As Keras' ``keras.utils.set_random_seed``: the same seed gives the same weights and the same
    training, on the CPU and on the simulated IPU alike, which is how the course compares them.

    Args:
      seed: Integer >= 0, the random seed to use.

    Raises:
      ValueError: if ``seed`` is not an integer >= 0.

    Example:

    >>> keras.utils.set_random_seed(0)
    >>> first = keras.layers.Dense(2, input_shape=(3,))
    >>> first.build((None, 3))
    >>> keras.utils.set_random_seed(0)
    >>> second = keras.layers.Dense(2)
    >>> second.build((None, 3))
    >>> bool((first.kernel.data == second.kernel.data).all())
    True
    """
    backend.set_random_seed(seed)
