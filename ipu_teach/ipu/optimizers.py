"""``ipu.optimizers``: the part of Graphcore's optimizer module a Keras user names."""

from .gradient_accumulation import GradientAccumulationReductionMethod

__all__ = ["GradientAccumulationReductionMethod"]
