"""The preprocessing layers a porter meets in a model: Rescaling and Normalization (with ``adapt``),
as tf-keras ``layers/preprocessing/``. Both are arithmetic on the vector units (Mul, Add, Sub, Div)."""

import numpy as np

from ...autograd import Tensor, ops
from .. import backend
from .base import Layer, same_shape


class Rescaling(Layer):
    """``inputs * scale + offset``: ``Rescaling(1 / 255)`` maps pixel values into [0, 1].

    Example:

    >>> keras.layers.Rescaling(1 / 127.5, offset=-1)(np.array([[0.0, 255.0]], np.float32)).data
    array([[-1.,  1.]], dtype=float32)
    """

    compute_output_shape = same_shape

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs, training=False):
        if inputs.dtype.kind != "f":  # 8-bit pixels, cast on the device as Keras' Rescaling casts them
            inputs = ops.cast(inputs, self.compute_dtype)
        scale = np.asarray(self.scale, inputs.dtype)
        return ops.add(ops.mul(inputs, scale), np.asarray(self.offset, inputs.dtype))


class Normalization(Layer):
    """Shifts and scales inputs to mean 0 and variance 1 per feature: ``(x - mean) / max(sqrt(variance),
    epsilon)``, from ``mean`` and ``variance`` given, or learnt from data by ``adapt`` (then kept as the
    non-trainable weights ``mean``, ``variance`` and ``count``, as Keras).

    Args:
      axis: The axis (or axes) that keep their own statistics; the others are averaged over. Default: -1,
        one mean per feature of the last axis. None: one mean for everything.
      mean, variance: The statistics, given instead of ``adapt`` (both or neither).

    Example:

    >>> layer = keras.layers.Normalization()
    >>> layer.adapt(np.array([[0.0, 10.0], [2.0, 30.0]], np.float32))
    >>> layer(np.array([[1.0, 20.0]], np.float32)).data
    array([[0., 0.]], dtype=float32)
    """

    compute_output_shape = same_shape

    def __init__(self, axis=-1, mean=None, variance=None, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
        if (mean is not None) != (variance is not None):
            raise ValueError(
                "When setting values directly, both `mean` and `variance` must be set. "
                f"Got mean: {mean} and variance: {variance}"
            )
        self.input_mean, self.input_variance = mean, variance

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError(
                f"All `axis` values must be in the range [-ndim, ndim). Found ndim: `{ndim}`, axis: {self.axis}"
            )
        self._keep = sorted(a % ndim for a in self.axis)
        if any(input_shape[d] is None for d in self._keep):
            raise ValueError(
                f"All `axis` values to be kept must have known shape. Got axis: {self.axis}, input shape: "
                f"{list(input_shape)}"
            )
        self._broadcast = tuple(input_shape[d] if d in self._keep else 1 for d in range(ndim))
        shape = tuple(input_shape[d] for d in self._keep)
        if self.input_mean is None:
            self.mean = self.add_weight("mean", shape, initializer="zeros", trainable=False)
            self.variance = self.add_weight("variance", shape, initializer="ones", trainable=False)
            self.count = self.add_weight("count", (), dtype="int64", initializer="zeros", trainable=False)
        else:
            self.mean = Tensor(np.broadcast_to(np.asarray(self.input_mean, np.float32), shape).copy())
            self.variance = Tensor(np.broadcast_to(np.asarray(self.input_variance, np.float32), shape).copy())

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the mean and variance of ``data`` (an array, over every axis but ``axis``)."""
        if self.input_mean is not None:
            raise ValueError(
                "Cannot `adapt` a Normalization layer that is initialized with static `mean` and `variance`, "
                f"you passed mean {self.input_mean} and variance {self.input_variance}."
            )
        data = np.asarray(data, np.float64)
        self._ensure_built(data.shape)
        reduce = tuple(d for d in range(data.ndim) if d not in self._keep)
        shape = self.mean.shape
        self.mean.data = data.mean(axis=reduce).reshape(shape).astype(np.float32)
        self.variance.data = data.var(axis=reduce).reshape(shape).astype(np.float32)
        self.count.data = np.asarray(data.size // max(1, int(np.prod(shape))), np.int64)

    def call(self, inputs, training=False):
        mean = ops.reshape(self.mean, self._broadcast)
        scale = np.maximum(np.sqrt(self.variance.data), backend.epsilon()).reshape(self._broadcast)
        return ops.div(ops.sub(inputs, mean), scale.astype(inputs.dtype))
