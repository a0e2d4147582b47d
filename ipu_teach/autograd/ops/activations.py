"""Activations, elementwise (softmax works along the last axis)."""

import numpy as np

from ..cost import OpCost
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


class ReLU(SavesOutput):
    function = staticmethod(lambda x: np.maximum(x, 0))
    gradient = staticmethod(lambda grad, y: grad * (y > 0))


class Sigmoid(SavesOutput):
    function = staticmethod(_sigmoid)
    gradient = staticmethod(lambda grad, y: grad * y * (1 - y))


class Tanh(SavesOutput):
    function = staticmethod(portable.tanh)
    gradient = staticmethod(lambda grad, y: grad * (1 - y * y))


class Exp(SavesOutput):
    function = staticmethod(portable.exp)
    gradient = staticmethod(lambda grad, y: grad * y)


class Log(SavesInput):
    function = staticmethod(portable.log)
    gradient = staticmethod(lambda grad, x: grad / x)


class Softplus(SavesInput):
    function = staticmethod(portable.softplus)
    gradient = staticmethod(lambda grad, x: grad * (0.5 * (1 + portable.tanh(0.5 * x))))  # the sigmoid, no overflow


class ELU(Function):
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


class Softmax(Function):
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
        n = int(np.prod(ctx.output_shape))
        rows = n // ctx.output_shape[-1]
        return OpCost(4 * n, n * ctx.itemsize, n * ctx.itemsize, rows)
