"""The other 2-D convolutions of Keras: Conv2DTranspose, DepthwiseConv2D and SeparableConv2D, with
Keras' arguments, weights (names, shapes, order) and output sizes.

Each is Conv2D's base with its own op: a transposed convolution (``ops.Conv2DTransposeOp``), a depthwise
one (``ops.DepthwiseConv2DOp``), and the depthwise op followed by a 1x1 ``ops.Conv2DOp`` for the separable
one, as ``tf.nn.separable_conv2d`` computes it, so each costs what its ops cost on the IPU.
"""

from ...autograd import ops
from ...autograd.ops.conv_transpose import transposed_output_length
from .. import regularizers
from .convolutional import Conv2D, _Convolution


class Conv2DTranspose(Conv2D):
    """Transposed convolution ("deconvolution"): the input gradient of a Conv2D with the same arguments,
    used to upsample (e.g. a decoder). Kernel shape ``(rows, cols, filters, input channels)``, as Keras.

    Example:

    >>> keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same")(keras.Input((7, 7, 4))).shape
    (None, 14, 14, 8)
    """

    op = staticmethod(ops.conv2d_transpose)

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, **kwargs)
        if output_padding is not None:
            raise ValueError("Conv2DTranspose: ipu-teach does not simulate output_padding; leave it None")
        self.output_padding = None

    def build(self, input_shape):
        self.add_kernel_and_bias(self.kernel_size + (self.filters, input_shape[-1]))

    def compute_output_shape(self, input_shape):
        sizes = tuple(
            transposed_output_length(d, k, s, self.padding, r)
            for d, k, s, r in zip(input_shape[1:3], self.kernel_size, self.strides, self.dilation_rate)
        )
        return (input_shape[0],) + sizes + (self.filters,)


class _Depthwise(_Convolution):
    """A depthwise convolution's window, multiplier and kernel: shared by DepthwiseConv2D and SeparableConv2D."""

    ndim = 4
    window = Conv2D.window

    def add_depthwise_kernel(self, input_shape):
        """The ``depthwise_kernel`` weight, from the layer's kernel initializer and regularizer (Keras'
        ``depthwise_*`` arguments); returns the number of channels it makes."""
        channels = input_shape[-1]
        shape = self.kernel_size + (channels, self.depth_multiplier)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape, initializer=self.kernel_initializer, regularizer=self.kernel_regularizer
        )
        return channels * self.depth_multiplier

    def depthwise(self, inputs):
        return ops.depthwise_conv2d(
            inputs, self.depthwise_kernel, strides=self.strides, padding=self.padding, dilation=self.dilation_rate
        )


def _multiplier(value):
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"depth_multiplier must be a positive integer, got {value!r}")
    return value


class DepthwiseConv2D(_Depthwise):
    """Each input channel convolved with its own ``depth_multiplier`` kernels (no mixing of channels):
    ``channels * depth_multiplier`` outputs. Weights ``depthwise_kernel`` (rows, cols, channels,
    multiplier) and ``bias``, as Keras.

    Example:

    >>> layer = keras.layers.DepthwiseConv2D(3, depth_multiplier=2)
    >>> layer(keras.Input((8, 8, 3))).shape, layer.depthwise_kernel.shape
    ((None, 6, 6, 6), (3, 3, 3, 2))
    """

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        self.depth_multiplier = _multiplier(depth_multiplier)
        super().__init__(1, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias, **kwargs)
        self.kernel_initializer, self.bias_initializer = depthwise_initializer, bias_initializer
        self.kernel_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)

    def build(self, input_shape):
        self.filters = self.add_depthwise_kernel(input_shape)
        self.add_bias()

    def call(self, inputs, training=False):
        y = self.depthwise(inputs)
        return self.activation(ops.add(y, self.bias) if self.bias is not None else y)


class SeparableConv2D(_Depthwise):
    """A depthwise convolution then a 1x1 convolution mixing the channels (MobileNet's block in one layer):
    far fewer weights and FLOPs than a Conv2D of the same window. Weights ``depthwise_kernel``,
    ``pointwise_kernel`` (1, 1, channels * multiplier, filters) and ``bias``, as Keras.

    Example:

    >>> layer = keras.layers.SeparableConv2D(16, 3, padding="same")
    >>> layer(keras.Input((8, 8, 4))).shape, [w.shape for w in layer.weights]
    ((None, 8, 8, 16), [(3, 3, 4, 1), (1, 1, 4, 16), (16,)])
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        depth_multiplier=1,
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        pointwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        pointwise_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        self.depth_multiplier = _multiplier(depth_multiplier)
        super().__init__(
            filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias, **kwargs
        )
        self.kernel_initializer, self.bias_initializer = depthwise_initializer, bias_initializer
        self.kernel_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.pointwise_initializer = pointwise_initializer
        self.pointwise_regularizer = regularizers.get(pointwise_regularizer)

    def build(self, input_shape):
        shape = (1, 1, self.add_depthwise_kernel(input_shape), self.filters)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape, initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer
        )
        self.add_bias()

    def call(self, inputs, training=False):
        y = ops.conv2d(self.depthwise(inputs), self.pointwise_kernel, self.bias_or_zeros())
        return self.activation(y)
