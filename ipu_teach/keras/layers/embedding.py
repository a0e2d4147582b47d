"""Embedding: integer indices to dense vectors, one trainable row per index (a Gather op); with
``mask_zero=True`` index 0 is padding, and its output carries a mask that the RNN layers after it use to
skip those timesteps, as Keras' masking does."""

import numpy as np

from ...autograd import ops
from .. import regularizers
from .base import Layer


class Embedding(Layer):
    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        mask_zero=False,
        input_length=None,
        **kwargs,
    ):
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        self.mask_zero = self.supports_masking = bool(mask_zero)
        self.input_dim, self.output_dim = int(input_dim), int(output_dim)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_initializer = (
            "random_uniform" if embeddings_initializer == "uniform" else embeddings_initializer
        )

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            (self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
        )

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def call(self, inputs, training=False):
        return ops.gather(self.embeddings, inputs.data)

    def compute_mask(self, inputs, mask=None):
        """``inputs != 0`` with ``mask_zero`` (True where there is a value), else None."""
        return np.not_equal(inputs.data, 0) if self.mask_zero else None
