"""Broadcasting arithmetic: add, subtract, multiply, divide, negate, absolute value."""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like
from .pointwise import SavesInput


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a gradient back down to the shape of an input that numpy broadcast."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(shape) if n == 1 and grad.shape[i + extra] != 1)
    return grad.sum(axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)


class _Broadcasting(Function):
    """A binary op whose inputs numpy may broadcast. Its backward computes each needed input gradient with
    ``gradient_codelets`` (None: the incoming gradient itself, no pass) and sums it back down to a broadcast
    input's shape: a reduction (a Dense layer's bias gradient is one)."""

    gradient_codelets = ("add", "add")

    @classmethod
    def backward_cost(cls, ctx):
        forward = cls.cost(ctx)
        out = int(np.prod(ctx.output_shape))
        vector = ()
        for needed, shape, codelet in zip(ctx.needs_input_grad, ctx.input_shapes, cls.gradient_codelets):
            if needed:
                vector += (elementwise(codelet, out) if codelet else ()) + reduction(out, int(np.prod(shape)))
        flops = forward.flops * max(1, sum(ctx.needs_input_grad))
        return OpCost(flops, forward.bytes_in, forward.bytes_out, forward.grains, (), vector)


class CastOp(Function):
    """A change of dtype (Keras' autocast of a layer's inputs and variables); the gradient goes back in the
    input's dtype, so a mixed-precision layer's fp32 variables get fp32 gradients."""

    codelet = "cast"
    autocast = False  # it is what autocasting applies

    @staticmethod
    def forward(ctx, x, dtype="float32"):
        ctx.input_dtype = x.dtype
        return x.astype(dtype)

    @classmethod
    def infer(cls, ctx, x, dtype="float32"):
        ctx.input_dtype = x.dtype
        return like(x, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.astype(ctx.input_dtype)


class AddOp(_Broadcasting):
    gradient_codelets = (None, None)

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), unbroadcast(grad, sb)


class SubOp(_Broadcasting):
    gradient_codelets = (None, "add")

    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad):
        sa, sb = ctx.input_shapes
        return unbroadcast(grad, sa), unbroadcast(-grad, sb)


class MulOp(_Broadcasting):
    gradient_codelets = ("add", "add")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        ga = unbroadcast(grad * b, a.shape) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(grad * a, b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


class DivOp(_Broadcasting):
    codelet = "divide"
    gradient_codelets = ("divide", "divide")

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        ga = unbroadcast(grad / b, a.shape) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(-grad * a / (b * b), b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb


class NegOp(Function):
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, grad):
        return -grad


class AbsOp(SavesInput):
    function = staticmethod(np.abs)
    gradient = staticmethod(lambda grad, x: grad * np.sign(x))
