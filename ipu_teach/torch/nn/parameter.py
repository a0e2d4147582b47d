"""``nn.Parameter``: a tensor a Module registers as one of its weights."""

import numpy as np

from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires a gradient by default; assigning one to a Module attribute registers it.

    Example:

    >>> from ipu_teach import torch
    >>> p = torch.nn.Parameter(torch.zeros(2))
    >>> p.requires_grad, isinstance(p, torch.Tensor)
    (True, True)
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        array = np.zeros(0, np.float32) if data is None else getattr(data, "array", data)
        super().__init__(np.asarray(array), requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)
