"""MaxPooling2D and AveragePooling2D (strides default to the pool size, as in Keras)."""

from ...autograd import ops
from .base import Layer
from .convolutional import as_pair, check_padding, sliding_window_sizes


class _Pooling2D(Layer):
    ndim = 4
    op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError(f"{type(self).__name__}: ipu-teach supports data_format='channels_last' only")
        self.pool_size = as_pair(pool_size, f"{type(self).__name__} pool_size")
        self.strides = as_pair(strides, f"{type(self).__name__} strides") if strides is not None else self.pool_size
        self.padding = check_padding(padding, type(self).__name__)

    def compute_output_shape(self, input_shape):
        """As Keras' ``Pooling2D.compute_output_shape``: each spatial axis by its window; channels kept."""
        spatial = sliding_window_sizes(self, input_shape, self.pool_size, self.strides, "pool_size")
        return (input_shape[0],) + spatial + (input_shape[-1],)

    def call(self, inputs, training=False):
        return self.op(inputs, pool_size=self.pool_size, strides=self.strides, padding=self.padding)


class MaxPooling2D(_Pooling2D):
    """Max pooling operation for 2D spatial data (channels last).

    Takes the maximum over each ``pool_size`` window, moving by ``strides``. In training the gradient goes
    to one position per window, the first maximum (as TensorFlow routes it), which matters on MNIST's flat
    backgrounds where windows hold ties.

    Args:
      pool_size: An integer or a pair of integers, the window size. Default: ``(2, 2)``.
      strides: An integer, a pair of integers, or None. Default: None, the ``pool_size``.
      padding: ``"valid"`` or ``"same"``, case-insensitive. Default: ``"valid"``.
      data_format: None or ``"channels_last"``, the only layout ipu-teach simulates.
      **kwargs: ``name``, ``dtype`` as for every Keras layer.

    Example:

    >>> x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    >>> y = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
    >>> y.shape
    (1, 2, 2, 1)
    >>> y.data[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]], dtype=float32)
    """

    op = staticmethod(ops.max_pool2d)


class AveragePooling2D(_Pooling2D):
    op = staticmethod(ops.avg_pool2d)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
