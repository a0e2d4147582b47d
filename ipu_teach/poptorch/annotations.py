"""PopTorch's model annotations: blocks for multi-IPU execution, ``identity_loss``, and per-op hints.

``BeginBlock(module, user_id, ipu_id)`` (a forward pre-hook on the module, as PopTorch's python/ops.py), ``with
Block(...)``, ``Block.start(...)`` and ``@BlockFunction(...)`` begin a block: the ops applied from there on run on
its IPU, in its stage (:mod:`.stages` says how, and the pipeline the simulated IPU costs). Outside a traced step
(the model run on the CPU, or the host's numerics) they do nothing, as in PopTorch. ``identity_loss`` marks a
custom loss (its ``reduction`` as PopTorch's); ``recomputationCheckpoint`` and ``set_available_memory`` return
their input, as they change only how Poplar schedules and plans the ops.

Example:

>>> from ipu_teach import poptorch, torch
>>> net = torch.nn.Sequential(torch.nn.Linear(2, 2), poptorch.BeginBlock(torch.nn.Linear(2, 2), ipu_id=1))
>>> list(net[1]._forward_pre_hooks.values())
[BeginBlock(user_id=None, ipu_id=1)]
>>> poptorch.identity_loss(torch.tensor([1.0, 3.0]), reduction="mean").item()
2.0
"""

import functools

from ..session import runtime
from ..torch.nn.module import Module
from ..torch.tensor import Tensor
from . import stages
from .errors import Error


class _BlockHook:
    """``BeginBlock``'s forward pre-hook: the block begins when the module is called."""

    def __init__(self, user_id, ipu_id):
        stages.check_ipu_id(ipu_id)
        self._user_id, self._ipu_id = user_id, ipu_id

    def __call__(self, module, args):
        if self._user_id is None:
            self._user_id = stages.next_auto_id()
        stages.begin_block(self._user_id, self._ipu_id)

    def __repr__(self):
        return f"BeginBlock(user_id={self._user_id}, ipu_id={self._ipu_id})"


def BeginBlock(layer_to_call, user_id=None, ipu_id=None):  # noqa: N802 (PopTorch's name)
    """``layer_to_call`` and everything after it (until the next block) runs on IPU ``ipu_id``, in block
    ``user_id``; returns ``layer_to_call`` (a function is wrapped in a module that begins the block).

    A forward pre-hook on the module, as PopTorch's: each change of IPU along the model starts a pipeline stage
    (:mod:`.stages`). ``ipu_id`` is required with the default ``AutoStage.SameAsIpu``.

    Raises:
      poptorch.Error: for a module already in a block, or something neither a module nor a function.

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
    >>> _ = poptorch.BeginBlock(net[1], ipu_id=1)         # net[1] and what follows run on IPU 1
    >>> model = poptorch.inferenceModel(net, poptorch.Options().deviceIterations(2))
    >>> _ = model(torch.zeros(8, 3))
    >>> model.get_ipu_executable().pipeline.schedule.device_mapping
    (0, 1)
    """
    if not isinstance(layer_to_call, Module):
        if callable(layer_to_call):
            return _BeginBlockFn(layer_to_call, user_id, ipu_id)
        raise Error("module is not an instance of torch.nn.Module or function.")
    if any(isinstance(hook, _BlockHook) for hook in layer_to_call._forward_pre_hooks.values()):
        raise Error("module has already been assigned to a block.")
    layer_to_call.register_forward_pre_hook(_BlockHook(user_id, ipu_id))
    return layer_to_call


class _BeginBlockFn(Module):
    """``BeginBlock`` of a function (PopTorch's LegacyBeginBlockFn)."""

    def __init__(self, function, user_id, ipu_id):
        super().__init__()
        self._function = function
        self.register_forward_pre_hook(_BlockHook(user_id, ipu_id))

    def forward(self, *args, **kwargs):
        return self._function(*args, **kwargs)


def removeBlocks(module) -> None:  # noqa: N802
    """Remove the ``BeginBlock`` annotations of ``module`` and its sub-modules."""
    for m in module.modules():
        for key in [k for k, hook in m._forward_pre_hooks.items() if isinstance(hook, _BlockHook)]:
            del m._forward_pre_hooks[key]


class Block(Module):
    """``with Block(user_id, ipu_id):`` -- the ops applied inside (and after, until the next block) run on IPU
    ``ipu_id``, in block ``user_id``. ``Block.start(user_id, ipu_id)`` begins one without a ``with``."""

    @staticmethod
    def useAutoId():  # noqa: N802
        """Number the blocks without a ``user_id`` from 0 again (call it at the start of ``forward``)."""
        stages.reset_auto_id()

    @staticmethod
    def start(user_id=None, ipu_id=None):
        stages.begin_block(user_id, ipu_id)

    def __init__(self, user_id=None, ipu_id=None):
        super().__init__()
        stages.check_ipu_id(ipu_id)
        self._user_id, self._ipu_id = user_id, ipu_id

    def __enter__(self):
        Block.start(self._user_id, self._ipu_id)
        return self

    def __exit__(self, *exc):
        return False


def BlockFunction(user_id=None, ipu_id=None):  # noqa: N802
    """A decorator: the function's ops run in block ``user_id`` on IPU ``ipu_id``."""

    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with Block(user_id, ipu_id):
                return function(*args, **kwargs)

        return wrapper

    return decorate


def identity_loss(x, reduction):
    """``x`` as the model's loss, reduced by ``reduction`` ("sum", "mean" or "none")."""
    if reduction not in ("sum", "mean", "none"):
        raise ValueError(f'identity_loss: reduction must be "sum", "mean" or "none", got {reduction!r}')
    loss = x.sum() if reduction == "sum" else x.mean() if reduction == "mean" else x
    runtime.marked_losses.append(loss)
    return loss


def is_marked_loss(value) -> bool:
    return any(value is loss for loss in runtime.marked_losses)


def clear_marked_losses() -> None:
    runtime.marked_losses.clear()


def recomputationCheckpoint(*tensors):  # noqa: N802
    return tensors[0] if len(tensors) == 1 else tensors


def set_available_memory(tensor: Tensor, available_memory_proportion: float) -> Tensor:
    if not 0 < available_memory_proportion <= 1:
        raise ValueError(f"available_memory_proportion must be in (0, 1], got {available_memory_proportion}")
    return tensor
