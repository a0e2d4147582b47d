"""``torch.optim``: SGD, Adam, AdamW, RMSprop and ``lr_scheduler`` (see :mod:`.optimizer`)."""

from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer, RMSprop

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
