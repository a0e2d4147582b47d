"""Dense, Flatten, Reshape, Dropout, Activation and Softmax."""

import math

import numpy as np

from ...autograd import Tensor, ops
from ...autograd.symbolic import ShapedArray, is_symbolic
from .. import activations, backend, regularizers
from .base import Layer, format_shape, known_size, same_shape


class Dense(Layer):
    """Just your regular densely-connected layer: ``output = activation(dot(input, kernel) + bias)``.

    On the IPU the matrix product runs on the AMP units of the tiles it is split over (Poplar's matmul
    planner); with ``keras.mixed_precision`` it computes in fp16 and keeps its weights in fp32, as Keras does.
    The kernel is created on the first call, from the last axis of the input.

    Args:
      units: Positive integer, dimensionality of the output space.
      activation: Activation function to use (a name such as ``"relu"`` or ``"softmax"``, or a callable).
        Default: None, no activation (``a(x) = x``).
      use_bias: Boolean, whether the layer uses a bias vector. Default: True.
      kernel_initializer: Initializer for the ``kernel`` weights matrix. Default: ``"glorot_uniform"``.
      bias_initializer: Initializer for the bias vector. Default: ``"zeros"``.
      kernel_regularizer, bias_regularizer: ``keras.regularizers`` penalties (or names) added to
        ``model.losses``. Default: None.
      **kwargs: ``name``, ``dtype``, ``input_shape``, ``trainable``, ``activity_regularizer`` as for every
        Keras layer.

    Raises:
      ValueError: if ``units`` is not a positive integer.

    Example:

    >>> layer = keras.layers.Dense(4, activation="relu")
    >>> layer(np.ones((2, 3), np.float32)).shape
    (2, 4)
    >>> layer.kernel.shape, layer.bias.shape
    ((3, 4), (4,))
    """

    supports_masking = True

    min_ndim = 2

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise ValueError(f"Dense: units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = (
            regularizers.get(kernel_regularizer),
            regularizers.get(bias_regularizer),
        )

    def build(self, input_shape):
        self.kernel = self.add_weight(
            "kernel",
            (input_shape[-1], self.units),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.bias = (
            self.add_weight("bias", (self.units,), initializer=self.bias_initializer, regularizer=self.bias_regularizer)
            if self.use_bias
            else None
        )

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def call(self, inputs, training=False):
        y = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            y = ops.add(y, self.bias)
        return self.activation(y)


class Flatten(Layer):
    """Flattens the input to ``(batch, features)``; does not affect the batch size.

    A reshape is a view: it moves no data, so Flatten costs no compute and no exchange on the simulated
    IPU (its ``Reshape`` op states no work).

    Args:
      **kwargs: ``name``, ``dtype``, ``input_shape`` as for every Keras layer.

    Example:

    >>> keras.layers.Flatten()(np.ones((2, 3, 4), np.float32)).shape
    (2, 12)
    """

    min_ndim = 1

    def compute_output_shape(self, input_shape):
        return (input_shape[0], known_size(input_shape[1:]))

    def call(self, inputs, training=False):
        return ops.reshape(inputs, (inputs.shape[0], -1))


class Reshape(Layer):
    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)  # the check

    def compute_output_shape(self, input_shape):
        """The target shape, its -1 (if any) taking the size that is left, as Keras' Reshape does."""
        size, target = known_size(input_shape[1:]), self.target_shape
        known = math.prod(d for d in target if d != -1)
        if size is None:
            return (input_shape[0],) + tuple(None if d == -1 else d for d in target)
        if (-1 not in target and known != size) or (-1 in target and size % known):
            raise ValueError(
                f'Layer "{self.name}": cannot reshape an input of shape {format_shape(input_shape)} '
                f"({size} values per sample) to {target}"
            )
        return (input_shape[0],) + tuple(size // known if d == -1 else d for d in target)

    def call(self, inputs, training=False):
        return ops.reshape(inputs, (inputs.shape[0],) + self.target_shape)


class Dropout(Layer):
    """Applies Dropout to the input: in training, zeroes a fraction ``rate`` of the values at random and
    scales the rest by ``1 / (1 - rate)``, so the sum over all inputs is unchanged on average.

    Does nothing in inference (``evaluate``, ``predict``, or a call without ``training=True``), as in Keras.
    Its random mask comes from the seeded Keras generator (``keras.utils.set_random_seed``).

    Args:
      rate: Float between 0 and 1, fraction of the input units to drop. 1 is taken, as by Keras 2.6, for a
        model used in inference only: training with it raises, as TensorFlow's dropout does.
      noise_shape: Shape of the binary dropout mask, ``None`` entries taking the input's size
        (``(batch, 1, features)`` drops the same features at every timestep). Default: None, the input's shape.
      seed: An integer to use as the layer's own random seed. Default: None, the Keras generator.
      **kwargs: ``name``, ``dtype`` as for every Keras layer.

    Raises:
      ValueError: if ``rate`` is not in ``[0, 1]``; in training, if it is 1.

    Example:

    >>> keras.utils.set_random_seed(0)
    >>> layer = keras.layers.Dropout(0.5)
    >>> x = np.ones((2, 4), np.float32)
    >>> layer(x).data                                  # inference: unchanged
    array([[1., 1., 1., 1.],
           [1., 1., 1., 1.]], dtype=float32)
    >>> sorted(set(layer(x, training=True).data.ravel().tolist()))   # training: dropped or doubled
    [0.0, 2.0]
    """

    supports_masking = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate <= 1:  # Keras 2.6 takes 1 here, and refuses it when training (in call)
            raise ValueError(f"Invalid value {rate} received for `rate`, expected a value between 0 and 1.")
        self.rate, self.noise_shape = float(rate), noise_shape
        self._rng = np.random.default_rng(seed) if seed is not None else None

    compute_output_shape = same_shape

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:  # tf.nn.dropout's check: every unit dropped would leave nothing to scale up
            raise ValueError(
                f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={self.rate} "
                f"(layer {self.name!r} drops every unit in training; use a rate below 1)"
            )
        rng = self._rng or backend.rng()
        shape = (
            inputs.shape
            if self.noise_shape is None
            else tuple(n if n is not None else d for n, d in zip(self.noise_shape, inputs.shape))
        )
        if is_symbolic(inputs.data):  # a shape-only trace: the mask's shape, no random numbers drawn
            return ops.mul(inputs, Tensor(ShapedArray(shape, inputs.dtype)))
        return ops.mul(inputs, dropout_mask(rng, shape, self.rate, inputs.dtype))


def dropout_mask(rng, shape, rate, dtype=np.float32) -> Tensor:
    """Keras' ``backend.dropout`` of ones: 0 with probability ``rate``, else ``1 / (1 - rate)``."""
    keep = (rng.random(shape, dtype=np.float32) >= rate) * np.float32(1 / (1 - rate))
    return Tensor(keep.astype(dtype))


class Activation(Layer):
    """Applies an activation function to an output.

    Useful to give the last activation its own dtype: with the ``mixed_float16`` policy, Keras' advice is
    an ``Activation("softmax", dtype="float32")`` head, so the probabilities and the loss stay in fp32.

    Args:
      activation: Activation function, such as ``"relu"``, ``"softmax"``, or a callable.
      **kwargs: ``name``, ``dtype`` as for every Keras layer.

    Example:

    >>> layer = keras.layers.Activation("relu")
    >>> layer(np.array([[-3.0, -1.0, 0.0, 2.0]], np.float32)).data
    array([[0., 0., 0., 2.]], dtype=float32)
    """

    supports_masking = True

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    compute_output_shape = same_shape

    def call(self, inputs, training=False):
        return self.activation(inputs)


class Softmax(Layer):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        if axis != -1:
            raise ValueError("Softmax: ipu-teach supports axis=-1 (the last axis) only")

    compute_output_shape = same_shape

    def call(self, inputs, training=False):
        return activations.softmax(inputs)
