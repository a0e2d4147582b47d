"""``torch.utils``: ``data``.

Example:

>>> from ipu_teach import torch
>>> len(torch.utils.data.TensorDataset(torch.zeros(5, 2)))
5
"""

from . import data

__all__ = ["data"]
