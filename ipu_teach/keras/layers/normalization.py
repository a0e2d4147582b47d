"""BatchNormalization: batch statistics in training (updating moving averages), moving ones in inference."""
import numpy as np

from ...autograd import Tensor, ops
from .base import Layer


class BatchNormalization(Layer):
    min_ndim = 2

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        if axis != -1:
            raise ValueError("BatchNormalization: ipu-teach normalises the last axis (channels) only; use axis=-1")
        self.momentum, self.epsilon, self.center, self.scale = momentum, epsilon, center, scale
        self._initializers = (gamma_initializer, beta_initializer, moving_mean_initializer, moving_variance_initializer)

    def build(self, input_shape):
        channels = (input_shape[-1],)
        g_init, b_init, mm_init, mv_init = self._initializers
        self.gamma = self.add_weight("gamma", channels, g_init, trainable=self.scale)
        self.beta = self.add_weight("beta", channels, b_init, trainable=self.center)
        self.moving_mean = self.add_weight("moving_mean", channels, mm_init, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", channels, mv_init, trainable=False)

    def call(self, inputs, training=False):
        if training:
            axes = tuple(range(inputs.ndim - 1))
            mean = inputs.data.mean(axis=axes)
            var = inputs.data.var(axis=axes)
            m = self.momentum
            self.moving_mean.data = (self.moving_mean.data * m + mean * (1 - m)).astype(np.float32)
            self.moving_variance.data = (self.moving_variance.data * m + var * (1 - m)).astype(np.float32)
        else:
            mean, var = self.moving_mean.data, self.moving_variance.data
        return ops.BatchNorm.apply(inputs, self.gamma, self.beta, Tensor(mean), Tensor(var),
                                   epsilon=self.epsilon, training=bool(training))
