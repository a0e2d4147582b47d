"""Embedding: integer indices to dense vectors, one trainable row per index (a Gather op)."""

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
        if mask_zero:
            raise ValueError("Embedding: ipu-teach has no masking; use mask_zero=False")
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
        return ops.Gather.apply(self.embeddings, inputs.data)
