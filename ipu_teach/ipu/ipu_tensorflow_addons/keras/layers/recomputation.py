"""Graphcore's ``RecomputationCheckpoint``: a tensor that recomputation keeps instead of recomputing."""

from .....keras import layers
from .....keras.layers.base import same_shape


class RecomputationCheckpoint(layers.Layer):
    """Marks its input as a recomputation checkpoint (``ipu_tensorflow_addons.keras.layers``).

    With ``IPUConfig.allow_recompute`` set, a model that is not pipelined keeps the checkpoints for the backward
    pass and recomputes the activations between them, each segment just before its backward pass: less memory
    (one segment's activations live at a time), more compute (the segments' forward passes again), as
    :mod:`ipu_teach.ipu.recomputation` costs it. In a pipeline, Graphcore's
    ``RecomputationMode.RecomputeAndBackpropagateInterleaved`` uses them within a stage; ipu-teach's pipeline
    recomputes a stage's whole forward pass from its stashed input, so there a checkpoint changes neither the
    simulated time nor the memory. The layer passes its input through unchanged. It takes one tensor or, as
    Graphcore's, a list of them (an LSTM's states), and gives the same.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint
    >>> RecomputationCheckpoint()(keras.Input(shape=(4,))).shape
    (None, 4)
    >>> [t.shape for t in RecomputationCheckpoint()([keras.Input(shape=(4,)), keras.Input(shape=(2,))])]
    [(None, 4), (None, 2)]
    """

    takes_lists = True

    def compute_output_shape(self, input_shape):
        return [same_shape(self, s) for s in input_shape] if self.multi_input else same_shape(self, input_shape)

    def call(self, inputs, training=False):
        return list(inputs) if self.multi_input else inputs
