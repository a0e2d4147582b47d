"""MaxPooling2D and AveragePooling2D (strides default to the pool size, as in Keras)."""
from ...autograd import ops
from .base import Layer
from .convolutional import as_pair, check_padding


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

    def call(self, inputs, training=False):
        return self.op.apply(inputs, pool_size=self.pool_size, strides=self.strides, padding=self.padding)


class MaxPooling2D(_Pooling2D):
    op = ops.MaxPool2D


class AveragePooling2D(_Pooling2D):
    op = ops.AvgPool2D


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
