"""PopTorch on the simulated IPU: ``trainingModel``, ``inferenceModel``, ``Options``, ``DataLoader``, blocks.

A PopTorch script runs unchanged on :mod:`ipu_teach.torch` (``ipu-teach run`` maps ``torch``, ``torchvision``
and ``poptorch``); each model call is costed on the same simulated IPU as a Keras model (see
:mod:`.executor`). Semantics and defaults follow graphcore/poptorch's source and its user guide.

Example:

>>> from ipu_teach import poptorch, torch
>>> model = poptorch.inferenceModel(torch.nn.Linear(3, 2), poptorch.Options().deviceIterations(4))
>>> model(torch.zeros(8, 3)).shape          # 4 iterations of 2 samples in one call
torch.Size([8, 2])
"""

from . import annotations, optim
from .annotations import (
    BeginBlock,
    Block,
    BlockFunction,
    identity_loss,
    recomputationCheckpoint,
    removeBlocks,
    set_available_memory,
)
from .dataloader import DataLoader
from .enums import AnchorMode, AutoStage, ConnectionType, DataLoaderMode, OutputMode, ReductionType
from .errors import Error
from .executor import PoplarExecutor, inferenceModel, trainingModel
from .options import Options
from .stages import PipelinedExecution, ShardedExecution, Stage

__version__ = "3.3.0+ipu_teach"
__all__ = [
    "AnchorMode",
    "AutoStage",
    "BeginBlock",
    "Block",
    "BlockFunction",
    "ConnectionType",
    "DataLoader",
    "DataLoaderMode",
    "Error",
    "Options",
    "OutputMode",
    "PipelinedExecution",
    "PoplarExecutor",
    "ReductionType",
    "ShardedExecution",
    "Stage",
    "identity_loss",
    "inferenceModel",
    "optim",
    "recomputationCheckpoint",
    "removeBlocks",
    "set_available_memory",
    "trainingModel",
]
