"""IPU-specific Keras names (``keras.ipu.PipelineStage``), as in Graphcore's TensorFlow port."""
from .pipeline_stage import PipelineStage

__all__ = ["PipelineStage"]
