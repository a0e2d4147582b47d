"""Keras' ``backend.relu(x, alpha, max_value, threshold)`` in one op: the ReLU layer's options, LeakyReLU
and ThresholdedReLU.

``f(x) = max_value`` for ``x >= max_value``, ``x`` for ``threshold < x < max_value`` and ``alpha * (x -
threshold)`` below the threshold (tf-keras ``backend.relu``; ``threshold=0`` with an ``alpha`` is
``tf.nn.leaky_relu``, whose gradient at 0 is ``alpha``). On the IPU it is one element-wise pass on the
vector units, as popnn's RELU (its default cost); its gradient is a pass from the saved input.
"""

import numpy as np

from ..function import Function
from .pointwise import SavesOutput


class GeneralReLUOp(Function):
    codelet = "relu"

    @staticmethod
    def forward(ctx, x, alpha=0.0, max_value=None, threshold=0.0):
        ctx.save_for_backward(x)
        ctx.options = (alpha, max_value, threshold)
        y = x * (x > threshold) if threshold else np.maximum(x, 0)
        if max_value is not None:
            y = np.minimum(y, np.asarray(max_value, x.dtype))
        if alpha:
            y = y - np.asarray(alpha, x.dtype) * np.maximum(np.asarray(threshold, x.dtype) - x, 0)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        alpha, max_value, threshold = ctx.options
        if alpha and max_value is None and not threshold:  # tf.nn.leaky_relu: alpha at and below 0
            return grad * np.where(x > 0, 1, alpha).astype(grad.dtype)
        passes = (x > threshold) if max_value is None else (x > threshold) & (x < max_value)
        slope = passes + np.asarray(alpha, grad.dtype) * (x < threshold) if alpha else passes
        return grad * slope.astype(grad.dtype)

    @classmethod
    def backward_cost(cls, ctx):
        """The slope from the saved input times the gradient: popnn's NonLinearityGrad, one pass."""
        return SavesOutput.backward_cost(ctx)
