"""BatchNormalization: batch statistics in training (updating moving averages), moving ones in inference.

As in TensorFlow 2's Keras, a frozen layer (``trainable=False``) runs in inference mode even in
``fit``: it normalises with its moving statistics and leaves them unchanged, which is what
fine-tuning a pretrained model relies on.

The moving variance follows Keras' two implementations (keras/layers/normalization/batch_normalization.py,
the same in Graphcore's Keras 2.6 and in tf-keras 2.x). On 4-D and 5-D inputs Keras uses the fused
kernel (``fused=None`` chooses it), whose batch variance has Bessel's correction, n / (n - 1) for n values
per channel, and keeps it (``_bessels_correction_test_only`` is True); on other inputs (a Dense
network's 2-D ones) it uses ``tf.nn.moments``' variance, without. Either way the batch is normalised
with the plain variance of the batch.
"""

import contextlib

import numpy as np

from ... import session
from ...autograd import Tensor, ops
from ...autograd.symbolic import is_symbolic
from ..engine import atomic_step, global_batch
from .base import Layer, same_shape

_pools = session.OpenBlocks()
"""The pools of the ``pooled_moving_statistics`` blocks open now: {layer: [(count, mean, variance), ...]}."""


@global_batch.pooled_over_parts
@contextlib.contextmanager
def pooled_moving_statistics():
    """Inside, BatchNormalization layers collect their batch statistics; on leaving, each updates
    its moving statistics once from the statistics of all the batches seen, pooled (the mean of the
    means, and the variance of the union). Replicas that each see a batch b then end where one
    step with the global batch R*b ends, as a single device would."""
    with _pools.pushed({}) as pool:
        yield
    for layer, stats in pool.items():
        counts = np.array([n for n, _, _ in stats], dtype=np.float64)
        means = np.array([m for _, m, _ in stats], dtype=np.float64)
        variances = np.array([v for _, _, v in stats], dtype=np.float64)
        weights = counts[:, None] / counts.sum()
        mean = (weights * means).sum(axis=0)
        variance = (weights * (variances + (means - mean) ** 2)).sum(axis=0)
        layer.update_moving_statistics(mean, layer.variance_to_average(variance, counts.sum()))


class BatchNormalization(Layer):
    min_ndim = 2
    supports_masking = True  # the mask passes through, as Keras

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
        fused=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if axis != -1:
            raise ValueError("BatchNormalization: ipu-teach normalises the last axis (channels) only; use axis=-1")
        self.momentum, self.epsilon, self.center, self.scale = momentum, epsilon, center, scale
        self.fused = fused
        self._initializers = (gamma_initializer, beta_initializer, moving_mean_initializer, moving_variance_initializer)

    def build(self, input_shape):
        """As in Keras, ``gamma`` exists only with ``scale``, ``beta`` only with ``center`` (so that
        ``set_weights`` takes Keras' weights), and ``fused=None`` becomes whether the input is 4-D or 5-D."""
        if self.fused is None:
            self.fused = len(input_shape) in (4, 5)
        elif self.fused and len(input_shape) not in (4, 5):
            raise ValueError(
                "Batch normalization layers with `fused=True` only support 4D or 5D input tensors. "
                f"Received tensor with shape: {tuple(input_shape)}"
            )
        channels = (input_shape[-1],)
        g_init, b_init, mm_init, mv_init = self._initializers
        self.gamma = self.add_weight("gamma", channels, initializer=g_init) if self.scale else None
        self.beta = self.add_weight("beta", channels, initializer=b_init) if self.center else None
        self.moving_mean = self.add_weight("moving_mean", channels, initializer=mm_init, trainable=False)
        self.moving_variance = self.add_weight("moving_variance", channels, initializer=mv_init, trainable=False)

    compute_output_shape = same_shape

    def variance_to_average(self, variance, count):
        """The batch variance (of ``count`` values per channel) that goes into the moving variance: with
        Bessel's correction when fused, as TensorFlow's fused kernels give it (CPU, GPU, and XLA's, which
        the IPU runs: ``count / max(count - 1, 1)``), plain otherwise."""
        return variance * (count / max(count - 1, 1)) if self.fused else variance

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
            count = inputs.size // inputs.shape[-1]
            if is_symbolic(mean):  # a shape-only trace: statistics without values update nothing
                pass
            elif _pools:
                _pools[-1].setdefault(self, []).append((count, mean, var))
            else:
                self.update_moving_statistics(mean, self.variance_to_average(var, count))
        else:
            mean, var = self.moving_mean.data, self.moving_variance.data
        gamma, beta = scale_and_offset(self, inputs.shape[-1])
        return ops.batch_norm(inputs, gamma, beta, Tensor(mean), Tensor(var), epsilon=self.epsilon, training=training)


def scale_and_offset(layer, features) -> tuple:
    """A normalization layer's ``gamma`` and ``beta``, or the ones and zeros Keras uses in place of those
    that ``scale=False`` / ``center=False`` leave out."""
    gamma = layer.gamma if layer.gamma is not None else Tensor(np.ones(features, np.float32))
    beta = layer.beta if layer.beta is not None else Tensor(np.zeros(features, np.float32))
    return gamma, beta
