"""``ipu.ops.pipelining_ops``: the pipeline schedules and recomputation modes, by Graphcore's names.

Example:

>>> from ipu_teach.ipu.ops import pipelining_ops
>>> pipelining_ops.PipelineSchedule.Grouped.name, pipelining_ops.RecomputationMode.Auto.name
('Grouped', 'Auto')
"""

import enum

from ...pipeline.registry import GRAPHCORE_SPECS
from ..poplar_options import PipelineStageOptions  # noqa: F401  (Graphcore's name lives here)

PipelineSchedule = enum.Enum(
    "PipelineSchedule",
    [(spec.display, value) for value, spec in enumerate(GRAPHCORE_SPECS)],
    module=__name__,
    qualname="PipelineSchedule",
)
PipelineSchedule.__doc__ = """The pipeline schedules Graphcore offers, by its names and in its order.

Passed to ``model.set_pipelining_options(pipeline_schedule=...)``; the schedules themselves are in
``ipu_teach.pipeline.registry``. Grouped (default): forwards grouped and backwards grouped, every IPU
busy each step of the main phase; the accumulation count must be a multiple of 2 x stages. Interleaved:
a forward and a backward alternate, fewer activations stashed. Sequential: one stage at a time, as a
sharded model (for debugging, or recomputation on one IPU).

Example:

>>> [schedule.name for schedule in ipu.ops.pipelining_ops.PipelineSchedule]
['Grouped', 'Interleaved', 'Sequential']
"""


class RecomputationMode(enum.Enum):
    """How activations are recomputed in the backward pass when ``IPUConfig.allow_recompute`` is set."""

    Auto = 0
    RecomputeThenBackpropagate = 1
    RecomputeAndBackpropagateInterleaved = 2
    Pipelined = 3
