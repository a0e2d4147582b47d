"""Dense, Flatten, Reshape, Dropout and the activation layers."""
import numpy as np

from ...autograd import Tensor, ops
from .. import activations, backend
from .base import Layer, format_shape


class Dense(Layer):
    min_ndim = 2

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units), self.kernel_initializer)
        self.bias = self.add_weight("bias", (self.units,), self.bias_initializer) if self.use_bias else None

    def call(self, inputs, training=False):
        y = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            y = ops.add(y, self.bias)
        return self.activation(y)


class Flatten(Layer):
    min_ndim = 1

    def call(self, inputs, training=False):
        return ops.reshape(inputs, (inputs.shape[0], -1))


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def build(self, input_shape):
        size, target = int(np.prod(input_shape[1:])), self.target_shape
        known = int(np.prod([d for d in target if d != -1]))
        if (-1 not in target and known != size) or (-1 in target and size % known):
            raise ValueError(f'Layer "{self.name}": cannot reshape an input of shape {format_shape(input_shape)} '
                             f"({size} values per sample) to {target}")

    def call(self, inputs, training=False):
        return ops.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class Dropout(Layer):
    """Zeroes a fraction ``rate`` of values in training and scales the rest by 1 / (1 - rate);
    does nothing in inference, as in Keras."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}")
        self.rate, self.noise_shape = float(rate), noise_shape
        self._rng = np.random.default_rng(seed) if seed is not None else None

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        rng = self._rng or backend.rng()
        shape = inputs.shape if self.noise_shape is None else tuple(
            n if n is not None else d for n, d in zip(self.noise_shape, inputs.shape))
        keep = (rng.random(shape, dtype=np.float32) >= self.rate) * np.float32(1 / (1 - self.rate))
        return ops.mul(inputs, Tensor(keep.astype(inputs.dtype)))


class Activation(Layer):
    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs, training=False):
        return self.activation(inputs)


class ReLU(Layer):
    def call(self, inputs, training=False):
        return activations.relu(inputs)


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if axis != -1:
            raise ValueError("Softmax: ipu-teach supports axis=-1 (the last axis) only")

    def call(self, inputs, training=False):
        return activations.softmax(inputs)
