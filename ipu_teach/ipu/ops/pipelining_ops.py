"""``ipu.ops.pipelining_ops``: the pipeline schedules and recomputation modes, by Graphcore's names.

Example:

>>> from ipu_teach.ipu.ops import pipelining_ops
>>> pipelining_ops.PipelineSchedule.Grouped.name, pipelining_ops.RecomputationMode.Auto.name
('Grouped', 'Auto')
"""

import enum

from ...schedules.registry import GRAPHCORE_SPECS
from ..poplar_options import PipelineStageOptions  # noqa: F401  (Graphcore's name lives here)

PipelineSchedule = enum.Enum(
    "PipelineSchedule",
    [(spec.display, value) for value, spec in enumerate(GRAPHCORE_SPECS)],
    module=__name__,
    qualname="PipelineSchedule",
)
PipelineSchedule.__doc__ = """The pipeline schedules Graphcore offers, by its names and in its order.

Passed to ``model.set_pipelining_options(pipeline_schedule=...)``; the schedules themselves are in
``ipu_teach.schedules.registry``. Grouped (default): forwards grouped and backwards grouped, every IPU
busy each step of the main phase; the accumulation count must be a multiple of 2 x stages. Interleaved:
a forward and a backward alternate, fewer activations stashed. Sequential: one stage at a time, as a
sharded model (for debugging, or recomputation on one IPU).

Example:

>>> [schedule.name for schedule in ipu.ops.pipelining_ops.PipelineSchedule]
['Grouped', 'Interleaved', 'Sequential']
"""


class RecomputationMode(enum.Enum):
    """How activations are recomputed in the backward pass when ``IPUConfig.allow_recompute`` is set, as
    ``set_pipelining_options(recomputation_mode=...)`` takes it: ``Auto`` recomputes each pipeline stage's forward
    pass from its stashed input; ``RecomputeAndBackpropagateInterleaved`` recomputes a stage one segment between
    recomputation checkpoints at a time, just before that segment's backward pass (:mod:`ipu_teach.ipu.recomputation`).

    Example:

    >>> mode = ipu.ops.pipelining_ops.RecomputationMode.RecomputeAndBackpropagateInterleaved
    >>> mode.name, mode.value
    ('RecomputeAndBackpropagateInterleaved', 2)
    """

    Auto = 0
    RecomputeThenBackpropagate = 1
    RecomputeAndBackpropagateInterleaved = 2
    Pipelined = 3


def recomputation_checkpoint(tensors, name=None):
    """Marks ``tensors`` as a recomputation checkpoint (Graphcore's ``pipelining_ops.recomputation_checkpoint``).

    With ``IPUConfig.allow_recompute`` set, a checkpointed tensor is kept for the backward pass and the
    activations after it are recomputed from it (:mod:`ipu_teach.ipu.recomputation`). Called on Keras tensors
    (building a functional model) it adds a ``RecomputationCheckpoint`` layer; on values it returns them
    unchanged, as the op does. One tensor or a list of them, as Graphcore's.

    Example:

    >>> x = keras.Input(shape=(8,))
    >>> y = ipu.pipelining_ops.recomputation_checkpoint(keras.layers.Dense(4)(x))
    >>> type(keras.Model(x, y).layers[-1]).__name__
    'RecomputationCheckpoint'
    """
    from ...keras.layers.base import KerasTensor
    from ..ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint

    symbolic = tensors if isinstance(tensors, (list, tuple)) else [tensors]
    if all(isinstance(t, KerasTensor) for t in symbolic):
        return RecomputationCheckpoint(name=name)(tensors)
    return tensors
