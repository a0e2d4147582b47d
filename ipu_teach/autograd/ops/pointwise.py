"""Elementwise ops of one input whose gradient is a formula in what the forward saves.

A subclass names its ``function`` and its ``gradient(grad, saved)``; the base class saves the output
(:class:`SavesOutput`, for tanh or exp, whose derivative is written in y) or the input
(:class:`SavesInput`, for log or abs, whose derivative is written in x), so the op is two lines.
"""

import numpy as np

from ..cost import OpCost, elementwise
from ..function import Function


class SavesOutput(Function):
    """``y = function(x)``; the backward is ``gradient(grad, y)``."""

    @classmethod
    def forward(cls, ctx, x):
        y = cls.function(x)
        ctx.save_for_backward(y)
        return y

    @classmethod
    def backward(cls, ctx, grad):
        (y,) = ctx.saved
        return cls.gradient(grad, y)

    @classmethod
    def backward_cost(cls, ctx):
        """The gradient from the saved output: popnn's NonLinearityGrad (or a multiply, as fast), one pass."""
        n = int(np.prod(ctx.output_shape))
        return OpCost(n, 2 * n * ctx.itemsize, n * ctx.itemsize, n, (), elementwise("nonlinearity_grad", n))


class SavesInput(Function):
    """``function(x)``; the backward is ``gradient(grad, x)``."""

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return cls.function(x)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved
        return cls.gradient(grad, x)
