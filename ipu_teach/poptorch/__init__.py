"""PopTorch on the simulated IPU: ``trainingModel``, ``inferenceModel``, ``Options``, ``DataLoader``, blocks.

A PopTorch script runs unchanged on :mod:`ipu_teach.torch` (``ipu-teach run`` maps ``torch``, ``torchvision``
and ``poptorch``); each model call is costed on the same simulated IPU as a Keras model (see
:mod:`.executor`). Semantics and defaults follow graphcore/poptorch's source and its user guide.
"""

import logging

from . import annotations, optim
from .annotations import (
    Block,
    BeginBlock,
    Stage,
    identity_loss,
    recomputationCheckpoint,
    set_available_memory,
)
from .dataloader import DataLoader
from .enums import AnchorMode, ConnectionType, DataLoaderMode, OutputMode, ReductionType
from .executor import Error, PoplarExecutor, inferenceModel, trainingModel
from .options import Options, PipelinedExecution, ShardedExecution
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
    "BeginBlock",
    "Block",
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
    "setLogLevel",
    "set_available_memory",
    "trainingModel",
]
