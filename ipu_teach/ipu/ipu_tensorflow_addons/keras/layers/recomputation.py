"""Graphcore's ``RecomputationCheckpoint``: a tensor that recomputation keeps instead of recomputing."""

from .....keras import layers
from .....keras.layers.base import same_shape


class RecomputationCheckpoint(layers.Layer):
    """Marks its input as a recomputation checkpoint (``ipu_tensorflow_addons.keras.layers``).

    With ``IPUConfig.allow_recompute`` set, the checkpoints are kept for the backward pass and the activations
    between them recomputed, a segment at a time just before its backward steps: less memory (one segment's
    activations live at once), more compute (the segments' forward passes again), as
    :mod:`ipu_teach.ipu.recomputation` costs it. So in a model that is not pipelined, and in a pipeline with
    ``RecomputationMode.RecomputeAndBackpropagateInterleaved`` (each stage then stashes its checkpoints with its
    input for every micro-batch in flight); with ``RecomputeThenBackpropagate`` a stage recomputes its whole
    forward pass first and a checkpoint changes nothing, as Graphcore's documentation says. The layer passes its
    input through unchanged. It takes one tensor or, as Graphcore's, a list of them (an LSTM's states), and
    gives the same.

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
