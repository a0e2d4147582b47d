"""GlobalAveragePooling2D and GlobalMaxPooling2D: the mean (a Mean op) or the maximum (one MaxPool2D window as
large as the image) over height and width of each channel."""

from ...autograd import ops
from .base import Layer


class _GlobalPooling2D(Layer):
    ndim = 4

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: ipu-teach supports data_format='channels_last' only")
        self.keepdims = bool(keepdims)

    def compute_output_shape(self, input_shape):
        batch, channels = input_shape[0], input_shape[-1]
        return (batch, 1, 1, channels) if self.keepdims else (batch, channels)


class GlobalAveragePooling2D(_GlobalPooling2D):
    def call(self, inputs, training=False):
        return ops.reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """Global max pooling for 2D spatial data (channels last): each channel's largest value.

    Args:
      data_format: None or ``"channels_last"``, the only layout ipu-teach simulates.
      keepdims: Whether to keep the spatial axes (as size 1). Default: False.

    Example:

    >>> x = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    >>> keras.layers.GlobalMaxPooling2D()(x).data
    array([[6., 7.]], dtype=float32)
    """

    def call(self, inputs, training=False):
        window = tuple(inputs.shape[1:3])
        pooled = ops.max_pool2d(inputs, pool_size=window, strides=window, padding="valid")
        return pooled if self.keepdims else ops.reshape(pooled, (inputs.shape[0], inputs.shape[-1]))


GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D
