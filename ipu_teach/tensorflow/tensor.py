"""What the ``tf`` functions return: ``EagerTensor`` (``ipu_teach/eager.py``), and the conversions they share."""

import numpy as np

from ..eager import EagerTensor, python_default, tensor  # noqa: F401  (the tf modules import them from here)


def dimensions(shape) -> tuple:
    """A shape given as a list, a tuple, a number or a 1-D tensor of dimensions, as a tuple of ints."""
    return tuple(int(d) for d in np.asarray(shape).reshape(-1))
