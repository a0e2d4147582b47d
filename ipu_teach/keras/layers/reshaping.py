"""Permute, ZeroPadding2D, Cropping2D and UpSampling2D: layers that rearrange values (Transpose, Pad,
Slice and Upsample ops)."""

from ...autograd import ops
from .base import Layer
from .convolutional import as_pair


class Permute(Layer):
    """``dims`` numbers the axes after the batch from 1, as Keras: ``Permute((2, 1))`` swaps them."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(
                f"Invalid permutation argument `dims` for Permute Layer. The set of indices in `dims` "
                f"must be consecutive and start from 1. Received dims={dims}"
            )

    def build(self, input_shape):
        if len(input_shape) != len(self.dims) + 1:
            raise ValueError(
                f"Permute '{self.name}': dims={self.dims} needs inputs of {len(self.dims)} axes after "
                f"the batch, got shape {tuple(input_shape)}"
            )

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + tuple(input_shape[d] for d in self.dims)

    def call(self, inputs, training=False):
        return ops.transpose(inputs, perm=(0,) + self.dims)


class ZeroPadding2D(Layer):
    """``padding``: an int (all sides), (rows, columns), or ((top, bottom), (left, right)); NHWC."""

    ndim = 4

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "ZeroPadding2D")
        padding = per_side(padding, "ZeroPadding2D: padding")
        self.padding = padding

    def compute_output_shape(self, input_shape):
        (top, bottom), (left, right) = self.padding
        batch, rows, cols, channels = input_shape
        return (batch, _padded(rows, top + bottom), _padded(cols, left + right), channels)

    def call(self, inputs, training=False):
        return ops.pad(inputs, pads=((0, 0),) + self.padding + ((0, 0),))


def _padded(size, padding):
    return None if size is None else size + padding


def per_side(value, what):
    """An int (all sides), (rows, columns) or ((top, bottom), (left, right)) as the last form, as Keras'
    ZeroPadding2D and Cropping2D take it."""
    if isinstance(value, int):
        value = ((value, value), (value, value))
    sides = tuple((p, p) if isinstance(p, int) else tuple(p) for p in value)
    if len(sides) != 2 or any(len(p) != 2 or not all(isinstance(v, int) for v in p) or min(p) < 0 for p in sides):
        raise ValueError(
            f"{what} must be an int, a pair of ints or a pair of pairs of non-negative ints, got {value!r}"
        )
    return sides


def _channels_last(data_format, layer):
    if data_format not in (None, "channels_last"):
        raise ValueError(f"{layer}: ipu-teach supports data_format='channels_last' only")


class Cropping2D(Layer):
    """Crops rows and columns off the edges of NHWC images: ``cropping`` as ZeroPadding2D's ``padding``.
    A Slice per axis: a view, no copy on the IPU.

    Example:

    >>> keras.layers.Cropping2D(((1, 0), (0, 2)))(keras.Input((5, 6, 3))).shape
    (None, 4, 4, 3)
    """

    ndim = 4

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Cropping2D")
        self.cropping = per_side(cropping, "Cropping2D: cropping")

    def compute_output_shape(self, input_shape):
        batch, rows, cols, channels = input_shape
        sizes = [None if d is None else d - sum(c) for d, c in zip((rows, cols), self.cropping)]
        if any(d is not None and d <= 0 for d in sizes):
            raise ValueError(
                "Argument `cropping` must be greater than the input shape. Received: inputs.shape="
                f"{tuple(input_shape)}, and cropping={self.cropping}"
            )
        return (batch, *sizes, channels)

    def call(self, inputs, training=False):
        self.compute_output_shape(inputs.shape)  # the check, for eager calls
        for axis, (before, after) in zip((1, 2), self.cropping):
            inputs = ops.slice_axis(inputs, before, inputs.shape[axis] - after, axis=axis)
        return inputs


class UpSampling2D(Layer):
    """Repeats the rows and columns of NHWC images ``size`` times (nearest-neighbour interpolation).

    Example:

    >>> keras.layers.UpSampling2D((2, 3))(keras.Input((4, 5, 2))).shape
    (None, 8, 15, 2)
    """

    ndim = 4

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "UpSampling2D")
        if interpolation != "nearest":
            raise ValueError(f"UpSampling2D: ipu-teach simulates interpolation='nearest' only, got {interpolation!r}")
        self.size = as_pair(size, "UpSampling2D size")

    def compute_output_shape(self, input_shape):
        batch, rows, cols, channels = input_shape
        return (batch, *(None if d is None else d * k for d, k in zip((rows, cols), self.size)), channels)

    def call(self, inputs, training=False):
        return ops.upsample(inputs, size=self.size)
