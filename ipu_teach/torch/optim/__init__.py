"""``torch.optim``: SGD, Adam, AdamW, RMSprop and ``lr_scheduler`` (see :mod:`.optimizer`).

Example:

>>> from ipu_teach import torch
>>> layer = torch.nn.Linear(2, 1)
>>> optimizer = torch.optim.Adam(layer.parameters(), lr=0.01)
>>> type(optimizer).__name__, optimizer.param_groups[0]["lr"]
('Adam', 0.01)
"""

from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
