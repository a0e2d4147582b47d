"""Graphcore's IPU ``Embedding``: a multi-slice of the table, optionally serialised into smaller lookups."""

import numpy as np

from .....autograd import ops
from .....keras import layers
from .unsupported import check_unsupported


class Embedding(layers.Embedding):
    """Looks up rows of an embedding table, as Poplar's multi-slice does (``ipu_tensorflow_addons.keras.layers``).

    The numbers are Keras' ``Embedding``'s. With ``serialization_factor`` k > 1 the lookup is done as Graphcore's
    ``embedding_ops.embedding_lookup`` does it: k lookups, each into a 1/k slice of the table, masked to the
    indices that fall in that slice and added up, which lowers the peak memory of a table that other operations
    also read (a tied output projection) at the cost of k times the lookups.

    Args:
      input_dim: Integer, the vocabulary size (largest index + 1).
      output_dim: Integer, the size of each embedding vector.
      embeddings_initializer: Initializer of the table. Default: ``"uniform"``.
      serialization_factor: Integer, the number of lookups the one is split into; it must divide ``input_dim``.
        Default: 1.
      embeddings_regularizer, activity_regularizer, embeddings_constraint, mask_zero, input_length: Keras'
        arguments, which Graphcore's layer refuses (NotImplementedError) when they are set.

    Raises:
      NotImplementedError: for an argument the IPU layer does not support.
      ValueError: for a ``serialization_factor`` below 1 or not dividing ``input_dim``, or inputs that are
        not ``(batch, input_length)``.

    Example:

    >>> from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import Embedding
    >>> layer = Embedding(8, 2, serialization_factor=4)
    >>> out = layer(np.array([[0, 7, 3]]))
    >>> np.array_equal(out.data, layer.embeddings.data[[[0, 7, 3]]])
    True
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        activity_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        input_length=None,
        serialization_factor=1,
        **kwargs,
    ):
        check_unsupported(
            self,
            embeddings_regularizer=embeddings_regularizer,
            activity_regularizer=activity_regularizer,
            embeddings_constraint=embeddings_constraint,
            mask_zero=mask_zero,
            input_length=input_length,
        )
        super().__init__(input_dim, output_dim, embeddings_initializer=embeddings_initializer, **kwargs)
        factor = int(serialization_factor)
        if factor < 1:
            raise ValueError(f"serialization_factor has to be at least 1, but was {serialization_factor}.")
        if self.input_dim % factor:
            raise ValueError(
                f"The serialization_factor ({factor}) must divide the size of the 0th dimension of the "
                f"embeddings ({self.input_dim})."
            )
        self.serialization_factor = factor

    def build(self, input_shape):
        if len(input_shape) != 2:
            raise ValueError("The input shape should be a tensor of shape [batch, input_length]")
        super().build(input_shape)

    def call(self, inputs, training=False):
        if self.serialization_factor == 1:
            return super().call(inputs, training)
        indices = np.asarray(inputs.data).astype(np.int64)
        rows = self.input_dim // self.serialization_factor
        output = None
        for first in range(0, self.input_dim, rows):
            inside = (indices >= first) & (indices < first + rows)
            part = ops.gather(ops.slice_axis(self.embeddings, first, first + rows, axis=0), (indices - first) * inside)
            part = ops.mul(part, inside[..., None].astype(np.float32))
            output = part if output is None else ops.add(output, part)
        return output
