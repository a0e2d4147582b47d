"""Permute and ZeroPadding2D: layers that rearrange values (a Transpose and a Pad op)."""

from ...autograd import ops
from .base import Layer


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
        return ops.Transpose.apply(inputs, perm=(0,) + self.dims)


class ZeroPadding2D(Layer):
    """``padding``: an int (all sides), (rows, columns), or ((top, bottom), (left, right)); NHWC."""

    ndim = 4

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise ValueError("ZeroPadding2D: ipu-teach supports data_format='channels_last' only")
        if isinstance(padding, int):
            padding = ((padding, padding), (padding, padding))
        padding = tuple((p, p) if isinstance(p, int) else tuple(p) for p in padding)
        if len(padding) != 2 or any(len(p) != 2 or min(p) < 0 for p in padding):
            raise ValueError(
                f"ZeroPadding2D: padding must be an int, a pair of ints or a pair of pairs of "
                f"non-negative ints, got {padding!r}"
            )
        self.padding = padding

    def compute_output_shape(self, input_shape):
        (top, bottom), (left, right) = self.padding
        batch, rows, cols, channels = input_shape
        return (batch, _padded(rows, top + bottom), _padded(cols, left + right), channels)

    def call(self, inputs, training=False):
        return ops.Pad.apply(inputs, pads=((0, 0),) + self.padding + ((0, 0),))


def _padded(size, padding):
    return None if size is None else size + padding
