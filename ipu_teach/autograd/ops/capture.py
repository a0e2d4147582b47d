"""Capturing the gradient that flows back through a point of the graph, as Graphcore's
``capture_upstream_gradients`` (tensorflow/python/ipu/ops/grad_util_ops.py) does for
``keras.ipu.layers.CaptureUpstreamGradients`` and ``CaptureActivationGradients``.

The forward pass is the identity; the backward pass adds the gradient it receives to ``store[tag]`` and
passes it on unchanged, so an optimizer that takes captured gradients (Graphcore's ``ALSOptimizer``) can
read them with the step's weight gradients. Like a reshape, it moves nothing and computes nothing.
"""

from ..cost import OpCost
from ..function import Function


class CaptureGradientOp(Function):
    @staticmethod
    def forward(ctx, x, store=None, tag=None):
        ctx.store, ctx.tag = store, tag
        return x.copy()

    @staticmethod
    def backward(ctx, grad):
        if ctx.store is not None:
            before = ctx.store.get(ctx.tag)
            ctx.store[ctx.tag] = grad.copy() if before is None else before + grad  # a layer called more than once
        return grad

    @classmethod
    def cost(cls, ctx):
        return OpCost(0, 0, 0, 1)  # the same tensor on the tiles: a view
