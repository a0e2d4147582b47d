"""Graphcore's ``ipu_tensorflow_addons`` (the IPU Keras layers of the SDK), on the simulated IPU.

Graphcore ships its IPU-specific Keras layers as a separate package, ``ipu_tensorflow_addons``
(graphcore/ipu_tensorflow_addons, ``keras/layers``). Under ``ipu-teach run`` an unchanged
``from ipu_tensorflow_addons.keras.layers import Embedding, LSTM`` imports the layers here: each is the
ipu-teach Keras layer that computes the same thing, with Graphcore's arguments, its refusals of what the IPU
layer does not support, and the IPU-specific way it is computed where that changes what the IPU does
(:mod:`.keras.layers`). A layer of the package that is not here is a ``NotSimulatedError`` naming it.

Example:

>>> from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers
>>> ipu_layers.LSTM is ipu_layers.PopnnLSTM
True
"""

from . import keras

__all__ = ["keras"]
