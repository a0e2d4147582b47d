"""``ipu.ops``: Graphcore's op modules that Keras users meet (``pipelining_ops``)."""
from . import pipelining_ops

__all__ = ["pipelining_ops"]
