"""IPU-specific Keras names (``keras.ipu.PipelineStage``), as in Graphcore's TensorFlow port, and the names
of the IPU methods ``ipu_teach.ipu`` adds to models (``model_methods``)."""
from . import model_methods
from .pipeline_stage import PipelineStage

__all__ = ["PipelineStage", "model_methods"]
