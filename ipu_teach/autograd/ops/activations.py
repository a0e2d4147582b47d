"""Activations, elementwise (softmax works along the last axis)."""
import numpy as np

from ..cost import OpCost
from ..function import Function
from . import portable


class ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        y = np.maximum(x, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved
        return grad * (y > 0)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        # Split by sign so exp never overflows.
        y = np.empty_like(x)
        pos = x >= 0
        y[pos] = 1 / (1 + portable.exp(-x[pos]))
        e = portable.exp(x[~pos])
        y[~pos] = e / (1 + e)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved
        return grad * y * (1 - y)


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = portable.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved
        return grad * (1 - y * y)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = portable.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved
        return grad * y


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return portable.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad / x


class Softplus(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return portable.softplus(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return grad * (0.5 * (1 + portable.tanh(0.5 * x)))  # the sigmoid, without overflow


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
