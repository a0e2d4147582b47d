"""Matrix multiply, the op behind Dense: ``x (..., K) @ w (K, N)``."""
import numpy as np

from ..cost import OpCost
from ..function import Function
from .gemm import matmul


class MatMul(Function):
    @staticmethod
    def forward(ctx, x, w):
        if w.ndim != 2 or x.shape[-1] != w.shape[0]:
            raise ValueError(f"MatMul: cannot multiply shapes {x.shape} and {w.shape}: "
                             f"the last axis of the first ({x.shape[-1]}) must equal the first axis of the second")
        ctx.save_for_backward(x, w)
        return matmul(x.reshape(-1, x.shape[-1]), w).reshape(x.shape[:-1] + w.shape[1:])

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved
        g2 = grad.reshape(-1, grad.shape[-1])
        gx = matmul(g2, w.T).reshape(x.shape) if ctx.needs_input_grad[0] else None
        gw = matmul(x.reshape(-1, x.shape[-1]).T, g2) if ctx.needs_input_grad[1] else None
        return gx, gw

    @classmethod
    def cost(cls, ctx):
        (xs, ws), out = ctx.input_shapes, ctx.output_shape
        outputs = int(np.prod(out))
        flops = 2 * outputs * ws[0]
        return OpCost(flops, (int(np.prod(xs)) + int(np.prod(ws))) * ctx.itemsize, outputs * ctx.itemsize, outputs)
