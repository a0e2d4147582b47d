"""Merge layers: Add, Subtract, Multiply, Average, Concatenate. They take a list of tensors, which is
how two-input and residual models are built (``Add()([x, shortcut])``)."""

import numpy as np

from ...autograd import ops
from .base import Layer, format_shape


class _Merge(Layer):
    multi_input = True

    def build(self, input_shape):
        if len(input_shape) < 2:
            raise ValueError(
                f"A merge layer ({type(self).__name__} '{self.name}') should be called on a list of at "
                f"least 2 inputs. Got {len(input_shape)} input(s)."
            )
        try:
            np.broadcast_shapes(*[tuple(1 if d is None else d for d in s[1:]) for s in input_shape])
        except ValueError:
            raise ValueError(
                f"Layer '{self.name}' ({type(self).__name__}): inputs have incompatible shapes. Received "
                f"shapes {', '.join(format_shape(s) for s in input_shape)}"
            ) from None

    def compute_output_shape(self, input_shape):
        """The inputs' shapes broadcast, an unknown size staying unknown (Keras' ``_Merge``)."""
        shapes = [tuple(s[1:]) for s in input_shape]
        rank = max(len(s) for s in shapes)
        axes = zip(*[(1,) * (rank - len(s)) + s for s in shapes])
        return (input_shape[0][0],) + tuple(None if None in sizes else max(sizes) for sizes in axes)

    def call(self, inputs, training=False):
        rank = max(x.ndim for x in inputs)
        inputs = [_expanded_after_batch(x, rank) for x in inputs]
        out = inputs[0]
        for other in inputs[1:]:
            out = self.combine(out, other)
        return out


def _expanded_after_batch(x, rank):
    """``x`` with axes of size 1 inserted after the batch up to ``rank``, as Keras' merge layers do, so
    that the other axes broadcast from the right (batch (2, 3) with batch (3,): the latter as (1, 3))."""
    if x.ndim == rank:
        return x
    return ops.reshape(x, x.shape[:1] + (1,) * (rank - x.ndim) + x.shape[1:])


class Add(_Merge):
    combine = staticmethod(ops.add)


class Multiply(_Merge):
    combine = staticmethod(ops.mul)


class Subtract(_Merge):
    def build(self, input_shape):
        if len(input_shape) != 2:
            raise ValueError(
                f"A `Subtract` layer ('{self.name}') should be called on exactly 2 inputs, got {len(input_shape)}"
            )
        super().build(input_shape)

    combine = staticmethod(ops.sub)


class Average(Add):
    def call(self, inputs, training=False):
        return ops.mul(super().call(inputs), np.float32(1 / len(inputs)))


class Concatenate(_Merge):
    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape):
        if len(input_shape) < 2:
            super().build(input_shape)
        axis = self.axis % len(input_shape[0])
        others = {tuple(d for a, d in enumerate(s) if a != axis) for s in input_shape}
        if axis == 0 or len({len(s) for s in input_shape}) > 1 or len(others) > 1:
            raise ValueError(
                f"A `Concatenate` layer ('{self.name}') requires inputs with matching shapes except for "
                f"the concatenation axis. Received: input_shape={[format_shape(s) for s in input_shape]}"
            )

    def compute_output_shape(self, input_shape):
        axis = self.axis % len(input_shape[0])
        sizes = [s[axis] for s in input_shape]
        joined = None if None in sizes else sum(sizes)
        return tuple(input_shape[0][:axis]) + (joined,) + tuple(input_shape[0][axis + 1 :])

    def call(self, inputs, training=False):
        return ops.concatenate(inputs, axis=self.axis)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)
