"""Activations, elementwise (softmax works along the last axis)."""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from . import portable
from .pointwise import SavesInput, SavesOutput


def _sigmoid(x):
    """Split by sign so exp never overflows."""
    y = np.empty_like(x)
    pos = x >= 0
    y[pos] = 1 / (1 + portable.exp(-x[pos]))
    e = portable.exp(x[~pos])
    y[~pos] = e / (1 + e)
    return y


class ReLUOp(SavesOutput):
    codelet = "relu"
    function = staticmethod(lambda x: np.maximum(x, 0))
    gradient = staticmethod(lambda grad, y: grad * (y > 0))
    ends_in_relu = True
    backward_before_relu = staticmethod(lambda ctx, grad: grad)  # ReLU alone: its input's gradient


class SigmoidOp(SavesOutput):
    codelet = "tanh"
    function = staticmethod(_sigmoid)
    gradient = staticmethod(lambda grad, y: grad * y * (1 - y))


class TanhOp(SavesOutput):
    codelet = "tanh"
    function = staticmethod(portable.tanh)
    gradient = staticmethod(lambda grad, y: grad * (1 - y * y))


class ExpOp(SavesOutput):
    codelet = "exp"
    function = staticmethod(portable.exp)
    gradient = staticmethod(lambda grad, y: grad * y)


class LogOp(SavesInput):
    codelet = "log"
    function = staticmethod(portable.log)
    gradient = staticmethod(lambda grad, x: grad / x)


class SoftplusOp(SavesInput):
    codelet = "log"
    function = staticmethod(portable.softplus)
    gradient = staticmethod(lambda grad, x: grad * (0.5 * (1 + portable.tanh(0.5 * x))))  # the sigmoid, no overflow


class ELUOp(Function):
    codelet = "exp"

    @staticmethod
    def forward(ctx, x, alpha=1.0):
        neg = alpha * portable.expm1(np.minimum(x, 0))
        y = np.where(x > 0, x, neg)
        ctx.save_for_backward(x, neg)
        ctx.alpha = alpha
        return y

    @staticmethod
    def backward(ctx, grad):
        x, neg = ctx.saved
        return grad * np.where(x > 0, 1, neg + ctx.alpha)


class SoftmaxOp(Function):
    """Softmax along the last axis. Losses look for it to use the logits (as Keras does)."""

    @staticmethod
    def forward(ctx, x):
        e = portable.exp(x - x.max(axis=-1, keepdims=True))
        y = e / e.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved
        return y * (grad - (grad * y).sum(axis=-1, keepdims=True))

    @classmethod
    def cost(cls, ctx):
        """popnn's softmax: the maximum of each row (a reduction), subtract it, exp, the sum of each row (a
        reduction), divide."""
        n = int(np.prod(ctx.output_shape))
        rows = n // ctx.output_shape[-1]
        return OpCost(4 * n, n * ctx.itemsize, n * ctx.itemsize, rows, (), softmax_passes(n, rows))

    @classmethod
    def backward_cost(cls, ctx):
        """``y * (grad - sum(grad * y))``: a product, its row sums (a reduction), a subtract and a product."""
        n = int(np.prod(ctx.output_shape))
        rows = n // ctx.output_shape[-1]
        vector = elementwise("add", n) + reduction(n, rows) + elementwise("add", n, rows) + elementwise("add", n)
        return OpCost(4 * n, 2 * n * ctx.itemsize, n * ctx.itemsize, rows, (), vector)


def softmax_passes(elements: int, rows: int) -> tuple:
    """The vector work of a softmax over ``rows`` rows of ``elements`` values in all (popnn ``nonLinearity``
    SOFTMAX_STABLE: reduce max, subtract, exponent, reduce add, divide)."""
    return (
        reduction(elements, rows)
        + elementwise("add", elements, rows)
        + elementwise("exp", elements)
        + reduction(elements, rows)
        + elementwise("divide", elements, rows)
    )
