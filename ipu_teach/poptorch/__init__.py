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

import logging

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
from .tensor_locations import TensorLocationSettings

__version__ = "3.3.0+ipu_teach"
_LOG_LEVELS = {
    "TRACE": (0, logging.DEBUG),
    "TRACE_ALL": (0, logging.DEBUG),
    "DEBUG": (1, logging.DEBUG),
    "DEBUG_IR": (1, logging.DEBUG),
    "INFO": (2, logging.INFO),
    "WARN": (3, logging.WARN),
    "ERR": (4, logging.ERROR),
    "OFF": (6, logging.CRITICAL),
}
"""PopTorch's log levels (python/_logging.py): name -> (its legacy integer, Python's level)."""


def setLogLevel(level):  # noqa: N802 (PopTorch's name)
    """The level of the ``poptorch`` logger, by name ("INFO", "DEBUG"...) or PopTorch's legacy integer (1 is DEBUG)."""
    if isinstance(level, int):
        names = [name for name, (number, _) in _LOG_LEVELS.items() if number == level]
        if not names:
            raise ValueError("Invalid log level integer")
        level = names[0]
    if level not in _LOG_LEVELS:
        raise ValueError(f"Unknown log level: {level}. Valid values are {', '.join(sorted(_LOG_LEVELS))}")
    logging.getLogger("poptorch").setLevel(_LOG_LEVELS[level][1])


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
    "TensorLocationSettings",
    "identity_loss",
    "inferenceModel",
    "optim",
    "recomputationCheckpoint",
    "removeBlocks",
    "setLogLevel",
    "set_available_memory",
    "trainingModel",
]
