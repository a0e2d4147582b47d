"""PopTorch's enums (python/enums.py of graphcore/poptorch): what a model returns, how gradients are reduced,
how a model is split over IPUs."""

import enum


class OutputMode(enum.IntEnum):
    """What a model call returns of the batches it ran: ``All`` a result for each, ``Sum`` their sum, ``Final``
    the last, ``EveryN`` every N-th; ``Default`` is All for inference, Final for training."""

    Final = 0
    EveryN = 1
    All = 2
    Sum = 3
    Default = 4


AnchorMode = OutputMode  # its name before SDK 2.4


class ReductionType(enum.IntEnum):
    """How the gradients of accumulated micro-batches and of replicas are combined: their ``Mean`` (default)
    or ``Sum``."""

    Sum = 0
    Mean = 1
    NoReduction = 2


class ConnectionType(enum.IntEnum):
    Always = 0
    OnDemand = 1
    Never = 2


class DataLoaderMode(enum.IntEnum):
    """``Sync`` reads the data in the caller; the asynchronous modes are accepted and read it the same way here."""

    Sync = 0
    Async = 1
    AsyncRebatched = 2


class AutoStage(enum.IntEnum):
    """How blocks get their stage when the strategy lists none: ``SameAsIpu`` (default) the block's ``ipu_id``,
    ``AutoIncrement`` one more for each new block (to come back to an IPU further along the model)."""

    SameAsIpu = 0
    AutoIncrement = 1
