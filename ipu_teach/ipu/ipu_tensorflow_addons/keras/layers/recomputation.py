"""Graphcore's ``RecomputationCheckpoint``: a tensor that recomputation keeps instead of recomputing."""

from .....keras import layers
from .....keras.layers.base import same_shape


class RecomputationCheckpoint(layers.Layer):
    """Marks its input as a checkpoint of a pipeline stage (``ipu_tensorflow_addons.keras.layers``).

    With ``RecomputationMode.RecomputeAndBackpropagateInterleaved`` Graphcore's pipeline stores a checkpoint
    instead of recomputing it before the backward pass, which lowers the liveness peak of a long stage. The
    layer passes its input through unchanged. ipu-teach's recomputation recomputes a stage's whole forward
    pass from its stashed input, so a checkpoint changes neither the simulated time nor the memory. It takes one
    tensor or, as Graphcore's, a list of them (an LSTM's states), and gives the same.

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
