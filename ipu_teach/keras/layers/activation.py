"""The activation layers with options: ReLU, LeakyReLU, ThresholdedReLU, ELU and PReLU (tf-keras
``layers/activation/``), with Keras' arguments, checks and messages.

ReLU, LeakyReLU and ThresholdedReLU are one op (``GeneralReLU``, Keras' ``backend.relu``), ELU the ELU op;
PReLU is made as Keras makes it, ``relu(x) - alpha * relu(-x)``, so its cost is those ops'.
"""

from ...autograd import ops
from .. import activations, regularizers
from .base import Layer, same_shape


def _not_negative(value, what):
    if value is None or value < 0:
        raise ValueError(f"{what} cannot be a negative value. Received: {value}")
    return float(value)


class ReLU(Layer):
    """Rectified Linear Unit activation: ``max(x, 0)``, capped at ``max_value``, with a slope
    ``negative_slope`` below ``threshold`` (Keras' ``backend.relu``).

    Args:
      max_value: Float >= 0, the largest output. Default: None, unlimited.
      negative_slope: Float >= 0, the slope below the threshold. Default: 0.
      threshold: Float >= 0, the value below which the output is ``negative_slope * (x - threshold)``.

    Raises:
      ValueError: for a negative (or None) option, in Keras' words.

    Example:

    >>> keras.layers.ReLU(max_value=1.0, negative_slope=0.5)(np.array([[-2.0, 0.5, 3.0]], np.float32)).data
    array([[-1. ,  0.5,  1. ]], dtype=float32)
    """

    supports_masking = True

    compute_output_shape = same_shape

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        if max_value is not None:
            _not_negative(max_value, "max_value of a ReLU layer")
        self.max_value = None if max_value is None else float(max_value)
        self.negative_slope = _not_negative(negative_slope, "negative_slope of a ReLU layer")
        self.threshold = _not_negative(threshold, "threshold of a ReLU layer")

    def call(self, inputs, training=False):
        return activations.relu(inputs, self.negative_slope, self.max_value, self.threshold)


class LeakyReLU(Layer):
    """Leaky ReLU: ``x`` for ``x > 0``, ``alpha * x`` otherwise (default ``alpha=0.3``, as Keras 2).

    Example:

    >>> keras.layers.LeakyReLU()(np.array([[-1.0, 2.0]], np.float32)).data
    array([[-0.3,  2. ]], dtype=float32)
    """

    supports_masking = True

    compute_output_shape = same_shape

    def __init__(self, alpha=0.3, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError(
                f"The alpha value of a Leaky ReLU layer cannot be None, Expecting a float. Received: {alpha}"
            )
        self.alpha = float(alpha)

    def call(self, inputs, training=False):
        return activations.relu(inputs, alpha=self.alpha)


class ThresholdedReLU(Layer):
    """``x`` where ``x > theta``, 0 elsewhere (default ``theta=1.0``)."""

    supports_masking = True

    compute_output_shape = same_shape

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None:
            raise ValueError(f"Theta of a Thresholded ReLU layer cannot be None, expecting a float. Received: {theta}")
        if theta < 0:
            raise ValueError(f"The theta value of a Thresholded ReLU layer should be >=0. Received: {theta}")
        self.theta = float(theta)

    def call(self, inputs, training=False):
        return ops.general_relu(inputs, threshold=self.theta)


class ELU(Layer):
    """Exponential Linear Unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    supports_masking = True

    compute_output_shape = same_shape

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if alpha is None:
            raise ValueError(f"Alpha of an ELU layer cannot be None, expecting a float. Received: {alpha}")
        self.alpha = float(alpha)

    def call(self, inputs, training=False):
        return activations.elu(inputs, self.alpha)


class PReLU(Layer):
    """Parametric ReLU: ``x`` for ``x > 0``, ``alpha * x`` otherwise, ``alpha`` a weight of the input's
    shape (without the batch), shared along ``shared_axes`` (numbered from 1, as Keras)."""

    supports_masking = True

    compute_output_shape = same_shape
    min_ndim = 2

    def __init__(
        self, alpha_initializer="zeros", alpha_regularizer=None, alpha_constraint=None, shared_axes=None, **kwargs
    ):
        super().__init__(**kwargs)
        if alpha_constraint is not None:
            raise ValueError("PReLU: alpha_constraint is not simulated by ipu-teach; remove it")
        self.alpha_initializer, self.alpha_regularizer = alpha_initializer, regularizers.get(alpha_regularizer)
        self.shared_axes = (
            None
            if shared_axes is None
            else list(shared_axes)
            if isinstance(shared_axes, (list, tuple))
            else [shared_axes]
        )

    def build(self, input_shape):
        shape = list(input_shape[1:])
        for axis in self.shared_axes or ():
            if not 1 <= axis < len(input_shape):
                raise ValueError(f"PReLU: shared_axes must number axes of the input from 1, got {self.shared_axes}")
            shape[axis - 1] = 1
        self.alpha = self.add_weight(
            "alpha", tuple(shape), initializer=self.alpha_initializer, regularizer=self.alpha_regularizer
        )

    def call(self, inputs, training=False):
        negative = ops.mul(self.alpha, activations.relu(ops.neg(inputs)))
        return ops.sub(activations.relu(inputs), negative)
