"""LayerNormalization: each sample normalised over its last axis (its own statistics, always)."""

from ...autograd import ops
from .base import Layer, same_shape
from .normalization import scale_and_offset


class LayerNormalization(Layer):
    min_ndim = 2
    supports_masking = True  # the mask passes through, as Keras

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
        """``gamma`` only with ``scale``, ``beta`` only with ``center``, as in Keras."""
        features = (input_shape[-1],)
        self.gamma = self.add_weight("gamma", features, initializer=self._initializers[0]) if self.scale else None
        self.beta = self.add_weight("beta", features, initializer=self._initializers[1]) if self.center else None

    compute_output_shape = same_shape

    def call(self, inputs, training=False):
        gamma, beta = scale_and_offset(self, inputs.shape[-1])
        return ops.layer_norm(inputs, gamma, beta, epsilon=self.epsilon)
