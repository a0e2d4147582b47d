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

import importlib

from . import model_methods, optimizers
from .pipeline_stage import PipelineStage

__all__ = ["PipelineStage", "layers", "model_methods", "optimizers"]


def __getattr__(name):
    """``keras.ipu.layers`` is imported on first use: its wrappers subclass ``keras.layers.Layer``, whose module
    imports ``keras.ipu.pipeline_stage`` (and so this package) while it is being defined."""
    if name == "layers":
        return importlib.import_module(f"{__name__}.layers")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
