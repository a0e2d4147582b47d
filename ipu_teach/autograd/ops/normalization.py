"""Batch normalisation over every axis but the last (channels), given the statistics to use.

The caller passes the mean and variance: the batch's own in training (so they depend on x and
the backward pass includes that dependence), the moving averages in inference (constants).
"""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like


def _normalise(ctx, x, gamma, beta, mean, inv):
    """``(x - mean) * inv`` scaled by ``gamma`` and shifted by ``beta``; keeps what backward needs."""
    xhat = (x - mean) * inv
    ctx.save_for_backward(xhat, gamma, inv)
    return (xhat * gamma + beta).astype(x.dtype)


def _scale_and_shift_gradients(ctx, grad, xhat):
    axes = tuple(range(grad.ndim - 1))
    ggamma = (grad * xhat).sum(axis=axes) if ctx.needs_input_grad[1] else None
    gbeta = grad.sum(axis=axes) if ctx.needs_input_grad[2] else None
    return ggamma, gbeta


class BatchNormOp(Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, mean, var, epsilon=1e-3, training=False):
        ctx.training = training
        return _normalise(ctx, x, gamma, beta, mean, 1.0 / np.sqrt(var + epsilon))

    @classmethod
    def infer(cls, ctx, x, gamma, beta, mean, var, epsilon=1e-3, training=False):
        ctx.training = training
        return like(x)

    @staticmethod
    def backward(ctx, grad):
        xhat, gamma, inv = ctx.saved
        axes = tuple(range(grad.ndim - 1))
        gx = None
        if ctx.needs_input_grad[0]:
            dxhat = grad * gamma
            if ctx.training:
                m = grad.size // grad.shape[-1]
                gx = inv / m * (m * dxhat - dxhat.sum(axis=axes) - xhat * (dxhat * xhat).sum(axis=axes))
            else:
                gx = dxhat * inv
        return (gx,) + _scale_and_shift_gradients(ctx, grad, xhat) + (None, None)

    @classmethod
    def cost(cls, ctx):
        """In training the batch statistics first (poplin ``normStatistics``: the sums of x and x^2 per channel,
        one ``popops::reduceMany`` sharing its stages), then whitening and scaling (``normWhiten``,
        ``normalise``: subtract the mean, times 1/std, times gamma, plus beta, a per-channel pass each)."""
        n, channels = int(np.prod(ctx.output_shape)), ctx.output_shape[-1]
        statistics = reduction(2 * n, 2 * channels) if ctx.training else ()
        return OpCost(6 * n, n * ctx.itemsize, n * ctx.itemsize, n, (), statistics + _per_channel_passes(n, channels))

    @classmethod
    def backward_cost(cls, ctx):
        """popnn's ``batchNormGradients``: grad x xhat, the per-channel sums of it and of grad (one reduceMany:
        they are also gamma's and beta's gradients), then the input gradient in three per-channel passes."""
        n, channels = int(np.prod(ctx.output_shape)), ctx.output_shape[-1]
        vector = elementwise("add", n) + reduction(2 * n, 2 * channels) + _per_channel_passes(n, channels)[:3]
        return OpCost(18 * n, 2 * n * ctx.itemsize, n * ctx.itemsize, n, (), vector)


class LayerNormOp(Function):
    """Normalisation of each sample over its last axis, then ``gamma`` and ``beta`` (per feature).
    The statistics always come from ``x`` itself, in training and inference alike."""

    @staticmethod
    def forward(ctx, x, gamma, beta, epsilon=1e-3):
        inv = 1.0 / np.sqrt(x.var(axis=-1, keepdims=True) + epsilon)
        return _normalise(ctx, x, gamma, beta, x.mean(axis=-1, keepdims=True), inv)

    @classmethod
    def infer(cls, ctx, x, gamma, beta, epsilon=1e-3):
        return like(x)

    @staticmethod
    def backward(ctx, grad):
        xhat, gamma, inv = ctx.saved
        gx = None
        if ctx.needs_input_grad[0]:
            dxhat = grad * gamma
            gx = inv * (dxhat - dxhat.mean(axis=-1, keepdims=True) - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
        return (gx,) + _scale_and_shift_gradients(ctx, grad, xhat)

    @classmethod
    def cost(cls, ctx):
        """Each sample's statistics over its last axis (a reduceMany to two values per row), then four passes."""
        n, features = int(np.prod(ctx.output_shape)), ctx.output_shape[-1]
        rows = n // features
        return OpCost(
            6 * n, n * ctx.itemsize, n * ctx.itemsize, n, (), reduction(2 * n, 2 * rows) + _per_channel_passes(n, rows)
        )

    @classmethod
    def backward_cost(cls, ctx):
        """Per-row sums for the input gradient and per-feature sums for gamma's and beta's."""
        n, features = int(np.prod(ctx.output_shape)), ctx.output_shape[-1]
        rows = n // features
        vector = (
            elementwise("add", n)
            + reduction(2 * n, 2 * rows)
            + _per_channel_passes(n, rows)[:3]
            + reduction(2 * n, 2 * features)
        )
        return OpCost(18 * n, 2 * n * ctx.itemsize, n * ctx.itemsize, n, (), vector)


def _per_channel_passes(elements: int, channels: int) -> tuple:
    """Four element-wise passes with a per-channel operand (poplin's addToChannel / channelMul vertices)."""
    return elementwise("add", elements, channels) * 4
