"""PopTorch's model annotations: blocks for multi-IPU execution, ``identity_loss``, and per-op hints.

``BeginBlock(module, user_id, ipu_id)`` and ``with Block(...)`` name the IPU each part of a model runs on
(PopTorch's ``python/_impl.py``); the simulator records how many IPUs the blocks use (a replica attaches that
many) and costs the model on one IPU per replica. ``identity_loss`` marks a custom loss (its ``reduction`` as
PopTorch's); ``recomputationCheckpoint`` and ``set_available_memory`` return their input, as they change only
how Poplar schedules and plans the ops.

Example:

>>> from ipu_teach import poptorch, torch
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), poptorch.BeginBlock(torch.nn.Linear(2, 2), ipu_id=1))
>>> poptorch.annotations.ipus_used(net)
2
>>> poptorch.identity_loss(torch.tensor([1.0, 3.0]), reduction="mean").item()
2.0
"""

import contextlib

from ..torch.tensor import Tensor

_open_blocks: list = []


def BeginBlock(module, user_id=None, ipu_id=None):  # noqa: N802 (PopTorch's name)
    """``module`` and everything after it (until the next block) runs on IPU ``ipu_id``; returns ``module``."""
    object.__setattr__(module, "_poptorch_block", (user_id, ipu_id))
    return module


@contextlib.contextmanager
def Block(user_id=None, ipu_id=None):  # noqa: N802
    """The ops applied inside run on IPU ``ipu_id``."""
    _open_blocks.append((user_id, ipu_id))
    try:
        yield
    finally:
        _open_blocks.pop()


Stage = Block


def ipus_used(model) -> int:
    """How many IPUs the blocks of ``model`` name (1 without blocks)."""
    ids = {block[1] for module in model.modules() for block in [getattr(module, "_poptorch_block", None)] if block}
    ids.discard(None)
    return max(ids, default=0) + 1


_marked_losses: list = []


def identity_loss(x, reduction):
    """``x`` as the model's loss, reduced by ``reduction`` ("sum", "mean" or "none")."""
    if reduction not in ("sum", "mean", "none"):
        raise ValueError(f'identity_loss: reduction must be "sum", "mean" or "none", got {reduction!r}')
    loss = x.sum() if reduction == "sum" else x.mean() if reduction == "mean" else x
    _marked_losses.append(loss)
    return loss


def is_marked_loss(value) -> bool:
    return any(value is loss for loss in _marked_losses)


def clear_marked_losses() -> None:
    _marked_losses.clear()


def recomputationCheckpoint(*tensors):  # noqa: N802
    return tensors[0] if len(tensors) == 1 else tensors


def set_available_memory(tensor: Tensor, available_memory_proportion: float) -> Tensor:
    if not 0 < available_memory_proportion <= 1:
        raise ValueError(f"available_memory_proportion must be in (0, 1], got {available_memory_proportion}")
    return tensor
