"""BatchNormalization: batch statistics in training (updating moving averages), moving ones in inference.

As in TensorFlow 2's Keras, a frozen layer (``trainable=False``) runs in inference mode even in
``fit``: it normalises with its moving statistics and leaves them unchanged, which is what
fine-tuning a pretrained model relies on.
"""

import contextlib

import numpy as np

from ...autograd import Tensor, ops
from ..engine import atomic_step
from .base import Layer

_pools: list = []


@contextlib.contextmanager
def pooled_moving_statistics():
    """Inside, BatchNormalization layers collect their batch statistics; on leaving, each updates
    its moving statistics once from the statistics of all the batches seen, pooled (the mean of the
    means, and the variance of the union). Replicas that each see a batch b then end where one
    step with the global batch R*b ends, as a single device would."""
    pool: dict = {}
    depth = len(_pools)
    try:  # pushed inside the try: a Ctrl-C right after the push still removes it
        _pools.append(pool)
        yield
    finally:
        del _pools[depth:]
    for layer, stats in pool.items():
        counts = np.array([n for n, _, _ in stats], dtype=np.float64)
        means = np.array([m for _, m, _ in stats], dtype=np.float64)
        variances = np.array([v for _, _, v in stats], dtype=np.float64)
        weights = counts[:, None] / counts.sum()
        mean = (weights * means).sum(axis=0)
        variance = (weights * (variances + (means - mean) ** 2)).sum(axis=0)
        layer.update_moving_statistics(mean, variance)


class BatchNormalization(Layer):
    min_ndim = 2

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        **kwargs,
    ):
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

    def update_moving_statistics(self, mean, var) -> None:
        """Written with the training step's weight update (``engine.atomic_step``), never apart from it."""
        m = self.momentum
        atomic_step.assign_all(
            (statistic, "data", (atomic_step.latest(statistic, "data") * m + batch * (1 - m)).astype(np.float32))
            for statistic, batch in ((self.moving_mean, mean), (self.moving_variance, var))
        )  # latest: a layer called twice in a step updates its statistics twice

    def call(self, inputs, training=False):
        training = bool(training) and self.trainable
        if training:
            axes = tuple(range(inputs.ndim - 1))
            mean = inputs.data.mean(axis=axes)
            var = inputs.data.var(axis=axes)
            if _pools:
                _pools[-1].setdefault(self, []).append((inputs.size // inputs.shape[-1], mean, var))
            else:
                self.update_moving_statistics(mean, var)
        else:
            mean, var = self.moving_mean.data, self.moving_variance.data
        return ops.BatchNorm.apply(
            inputs, self.gamma, self.beta, Tensor(mean), Tensor(var), epsilon=self.epsilon, training=training
        )
