"""A Keras-compatible API on the ipu-teach autograd: ``import ipu_teach.keras as keras``.

Names, signatures and defaults follow Keras (TensorFlow 2.x), so the Graphcore tutorial's code
runs with only its imports changed.
"""
from . import (activations, backend, callbacks, datasets, initializers, ipu, layers, losses, metrics,
               mixed_precision, models, optimizers, utils)
from .layers import Input
from .models import Model, Sequential

__all__ = ["Input", "Model", "Sequential", "activations", "backend", "callbacks", "datasets", "initializers",
           "ipu", "layers", "losses", "metrics", "mixed_precision", "models", "optimizers", "utils"]
