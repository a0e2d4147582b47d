"""IPU-specific Keras names (``keras.ipu.PipelineStage``, ``keras.ipu.optimizers.ALSOptimizer``,
``keras.ipu.layers.CaptureActivationGradients``), as in Graphcore's
TensorFlow port, and the names of the IPU methods ``ipu_teach.ipu`` adds to models (``model_methods``).

Example:

>>> inputs = keras.Input(shape=(4,))
>>> with keras.ipu.PipelineStage(0):
...     x = keras.layers.Dense(8)(inputs)
>>> with keras.ipu.PipelineStage(1):
...     outputs = keras.layers.Dense(2)(x)
>>> [a.pipeline_stage for a in keras.Model(inputs, outputs).get_pipeline_stage_assignment()]
[0, 1]
"""

from . import layers, model_methods, optimizers
from .pipeline_stage import PipelineStage

__all__ = ["PipelineStage", "layers", "model_methods", "optimizers"]
