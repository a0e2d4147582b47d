"""``ipu.ops``: Graphcore's op modules that Keras users meet (``pipelining_ops``).

Example:

>>> ipu.ops.pipelining_ops.PipelineSchedule.Interleaved.name
'Interleaved'
"""

from . import pipelining_ops

__all__ = ["pipelining_ops"]
