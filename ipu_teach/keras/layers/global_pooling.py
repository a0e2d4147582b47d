"""GlobalAveragePooling2D: the mean over height and width of each channel (a Mean op)."""

from ...autograd import ops
from .base import Layer


class GlobalAveragePooling2D(Layer):
    ndim = 4

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("GlobalAveragePooling2D: ipu-teach supports data_format='channels_last' only")
        self.keepdims = bool(keepdims)

    def call(self, inputs, training=False):
        return ops.reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)


GlobalAvgPool2D = GlobalAveragePooling2D
