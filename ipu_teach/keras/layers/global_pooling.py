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

    def compute_output_shape(self, input_shape):
        batch, channels = input_shape[0], input_shape[-1]
        return (batch, 1, 1, channels) if self.keepdims else (batch, channels)

    def call(self, inputs, training=False):
        return ops.reduce_mean(inputs, axis=(1, 2), keepdims=self.keepdims)


GlobalAvgPool2D = GlobalAveragePooling2D
