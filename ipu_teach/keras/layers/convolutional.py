"""Conv2D and Conv1D (channels last, as Keras' default); Conv1D is a Conv2D of height 1."""

import numpy as np

from ...autograd import Tensor, ops
from .. import activations, regularizers
from .base import Layer


def as_pair(value, what):
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, (int, np.integer)) or v < 1 for v in pair):
        raise ValueError(f"{what} must be a positive integer or a pair of them, got {value!r}")
    return tuple(int(v) for v in pair)


def check_padding(padding, layer, allowed=("valid", "same")):
    """``padding`` in lower case, if ``layer`` takes it (Keras' names are case-insensitive)."""
    checked = str(padding).lower()
    if checked not in allowed:
        choices = ", ".join(repr(p) for p in allowed[:-1]) + f" or {allowed[-1]!r}"
        raise ValueError(f"{layer}: padding must be {choices}, got {padding!r}")
    return checked


def window_output_length(size, window, stride, padding, dilation=1):
    """Keras' ``conv_utils.conv_output_length``: the positions of a ``window`` (its taps ``dilation``
    apart) moved by ``stride`` over ``size`` values, where 'same' and 'causal' pad so that only the stride
    shrinks the axis. None for an unknown size."""
    if size is None:
        return None
    window = (window - 1) * dilation + 1
    length = size if padding in ("same", "causal") else size - window + 1
    return (length + stride - 1) // stride


def sliding_window_sizes(layer, input_shape, window, strides, argument, dilation=None) -> tuple:
    """The sizes of the spatial axes (between batch and channels) of a convolution or pooling
    ``layer``'s output. A window larger than the input is an error naming the layer, where TensorFlow
    reports a negative dimension size when the model is built."""
    spatial = tuple(input_shape[1:-1])
    dilation = dilation or (1,) * len(window)
    sizes = tuple(
        window_output_length(d, k, s, layer.padding, r) for d, k, s, r in zip(spatial, window, strides, dilation)
    )
    if any(d is not None and d < 1 for d in sizes):
        raise ValueError(
            f'{type(layer).__name__} "{layer.name}": a {argument} of {format_sizes(window)} does not fit an '
            f"input of {format_sizes(spatial)} with padding {layer.padding!r}; use padding='same' or a "
            f"smaller {argument}"
        )
    return sizes


def format_sizes(sizes) -> str:
    return "x".join("None" if d is None else str(d) for d in sizes)


def _axes(value) -> tuple:
    """A window size or stride as a tuple with one entry per spatial axis (Conv1D keeps ints)."""
    return value if isinstance(value, tuple) else (value,)


class _Convolution(Layer):
    """What Keras' convolutions share (Keras has the same ``Conv`` base, and its arguments' order): the
    filters, dilation, activation, bias and initializers, and the channels-last check; each subclass reads
    its own window sizes and padding."""

    paddings = ("valid", "same")

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        name = type(self).__name__
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{name}: ipu-teach supports data_format='channels_last' only (channels on the last axis)")
        if not isinstance(filters, (int, np.integer)) or filters <= 0:
            raise ValueError(
                f"Invalid value for argument `filters`. Expected a strictly positive value. Received filters={filters}."
            )
        self.filters = int(filters)
        self.kernel_size, self.strides = self.window(kernel_size, strides)
        self.dilation_rate = self.window(dilation_rate, 1)[0]
        if max(_axes(self.strides)) > 1 and max(_axes(self.dilation_rate)) > 1:
            raise ValueError(
                "`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                f"Received: strides={_axes(self.strides)} and dilation_rate={_axes(self.dilation_rate)}"
            )
        self.padding = check_padding(padding, name, self.paddings)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = (
            regularizers.get(kernel_regularizer),
            regularizers.get(bias_regularizer),
        )

    def window(self, kernel_size, strides) -> tuple:
        """The kernel size and strides (or the dilation rate and 1), checked, in this layer's form."""
        raise NotImplementedError

    def compute_output_shape(self, input_shape):
        """As Keras' ``Conv.compute_output_shape``: each spatial axis by its window, then the filters."""
        window, strides = _axes(self.kernel_size), _axes(self.strides)
        spatial = sliding_window_sizes(self, input_shape, window, strides, "kernel_size", _axes(self.dilation_rate))
        return (input_shape[0],) + spatial + (self.filters,)

    def add_kernel_and_bias(self, kernel_shape):
        self.kernel = self.add_weight(
            "kernel", kernel_shape, initializer=self.kernel_initializer, regularizer=self.kernel_regularizer
        )
        self.add_bias()

    def add_bias(self):
        self.bias = (
            self.add_weight(
                "bias", (self.filters,), initializer=self.bias_initializer, regularizer=self.bias_regularizer
            )
            if self.use_bias
            else None
        )

    def bias_or_zeros(self):
        return self.bias if self.bias is not None else Tensor(np.zeros(self.filters, dtype=np.float32))


class Conv2D(_Convolution):
    """2D convolution layer (e.g. spatial convolution over images), channels last (NHWC).

    The layer convolves a ``kernel_size`` window of ``filters`` kernels over inputs of shape
    ``(batch, rows, cols, channels)``, adds a bias and applies ``activation``. On the IPU Poplar lowers a
    convolution to matrix products on the AMP, in groups of 8 input channels in fp32 (16 in fp16): the
    tutorial's first layer, with 1 channel, runs far below peak for that reason.

    Args:
      filters: Integer, the number of output filters in the convolution.
      kernel_size: An integer or a pair of integers, the height and width of the 2D window.
      strides: An integer or a pair of integers, the strides of the convolution. Default: ``(1, 1)``.
      padding: ``"valid"`` (no padding) or ``"same"`` (pad evenly so the output has the input's size when
        ``strides=1``), case-insensitive. Default: ``"valid"``.
      data_format: None or ``"channels_last"``, the only layout ipu-teach simulates.
      dilation_rate: An integer or a pair, the spacing of the kernel's taps (an atrous convolution); not
        with ``strides`` > 1, as Keras. Default: ``(1, 1)``.
      activation: Activation function to use. Default: None, no activation. ``"relu"`` runs fused with the
        convolution on the host (``autograd.ops.fused``: the same numbers, and the same two ops on the IPU), and
        a ``MaxPooling2D`` with the default strides that is the output's only use applies ReLU's gradient with
        its own, in cache.
      use_bias: Boolean, whether the layer uses a bias vector. Default: True.
      kernel_initializer: Initializer for the ``kernel``. Default: ``"glorot_uniform"``.
      bias_initializer: Initializer for the bias vector. Default: ``"zeros"``.
      kernel_regularizer, bias_regularizer: ``keras.regularizers`` penalties (or names) added to
        ``model.losses``. Default: None.
      **kwargs: ``name``, ``dtype``, ``input_shape`` as for every Keras layer.

    Raises:
      ValueError: for a ``channels_first`` data format, a ``padding`` other than ``"valid"`` / ``"same"``,
        or sizes that are not positive integers.

    Example:

    >>> x = keras.Input(shape=(28, 28, 1))
    >>> layer = keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu")
    >>> layer(x).shape
    (None, 26, 26, 8)
    >>> layer.kernel.shape
    (3, 3, 1, 8)
    """

    ndim = 4
    op = staticmethod(ops.conv2d)
    """The op that convolves (a subclass's own: Conv2DTranspose's)."""

    def window(self, kernel_size, strides):
        return as_pair(kernel_size, "Conv2D kernel_size"), as_pair(strides, "Conv2D strides")

    def build(self, input_shape):
        self.add_kernel_and_bias(self.kernel_size + (input_shape[-1], self.filters))

    def call(self, inputs, training=False):
        fused = self.op is ops.conv2d and self.activation is activations.relu  # ReLU in the product's pieces
        y = (ops.conv2d_relu if fused else self.op)(
            inputs,
            self.kernel,
            self.bias_or_zeros(),
            strides=self.strides,
            padding=self.padding,
            dilation=self.dilation_rate,
        )
        return y if fused else self.activation(y)


class Conv1D(_Convolution):
    """Sequences (batch, steps, channels): the Conv2D op on a height-1 image, so its gradient and IPU
    cost are the convolution's. ``padding='causal'`` pads the start only (output t sees inputs <= t)."""

    ndim = 3
    paddings = ("valid", "same", "causal")

    def window(self, kernel_size, strides):
        return (
            as_pair((1, _single(kernel_size, "Conv1D kernel_size")), "Conv1D kernel_size")[1],
            as_pair((1, _single(strides, "Conv1D strides")), "Conv1D strides")[1],
        )

    def build(self, input_shape):
        self.add_kernel_and_bias((self.kernel_size, input_shape[-1], self.filters))

    def call(self, inputs, training=False):
        n, steps, channels = inputs.shape
        image = ops.reshape(inputs, (n, 1, steps, channels))
        padding = self.padding
        if padding == "causal":
            start = (self.kernel_size - 1) * self.dilation_rate
            image, padding = ops.pad(image, pads=((0, 0), (0, 0), (start, 0), (0, 0))), "valid"
        kernel = ops.reshape(self.kernel, (1,) + self.kernel.shape)
        y = ops.conv2d(
            image,
            kernel,
            self.bias_or_zeros(),
            strides=(1, self.strides),
            padding=padding,
            dilation=(1, self.dilation_rate),
        )
        return self.activation(ops.reshape(y, (n, y.shape[2], self.filters)))


def _single(value, what):
    return value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
