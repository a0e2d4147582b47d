"""LayerNormalization: each sample normalised over its last axis (its own statistics, always)."""

from ...autograd import ops
from .base import Layer, same_shape


class LayerNormalization(Layer):
    min_ndim = 2

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if axis not in (-1, [-1], (-1,)):
            raise ValueError("LayerNormalization: ipu-teach normalises the last axis only; use axis=-1")
        self.epsilon, self.center, self.scale = epsilon, center, scale
        self._initializers = (gamma_initializer, beta_initializer)

    def build(self, input_shape):
        features = (input_shape[-1],)
        self.gamma = self.add_weight("gamma", features, self._initializers[0], trainable=self.scale)
        self.beta = self.add_weight("beta", features, self._initializers[1], trainable=self.center)

    compute_output_shape = same_shape

    def call(self, inputs, training=False):
        return ops.LayerNorm.apply(inputs, self.gamma, self.beta, epsilon=self.epsilon)
