"""Matrix multiply, the op behind Dense: ``x (..., K) @ w (K, N)``."""

import numpy as np

from ..cost import MatrixProduct, OpCost
from ..function import Function
from ..symbolic import like, result_dtype
from .gemm import matmul


class MatMulOp(Function):
    @staticmethod
    def forward(ctx, x, w):
        _check_shapes(x, w)
        ctx.save_for_backward(x, w)
        return matmul(x.reshape(-1, x.shape[-1]), w).reshape(x.shape[:-1] + w.shape[1:])

    @classmethod
    def infer(cls, ctx, x, w):
        _check_shapes(x, w)
        return like(x, x.shape[:-1] + w.shape[1:], result_dtype(x, w))

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
        rows, (depth, cols) = int(np.prod(xs)) // xs[-1], ws
        left, right = ctx.laid_out_inputs
        product = MatrixProduct(rows, depth, cols, depth, left_laid_out=left, right_laid_out=right)
        return OpCost(
            product.flops,
            (int(np.prod(xs)) + int(np.prod(ws))) * ctx.itemsize,
            int(np.prod(out)) * ctx.itemsize,
            int(np.prod(out)),
            (product,),
        )

    @classmethod
    def backward_cost(cls, ctx):
        """The input gradient ``grad @ w.T`` and the weight gradient ``x.T @ grad``, each where needed."""
        (xs, ws), out = ctx.input_shapes, ctx.output_shape
        rows, (depth, cols) = int(np.prod(xs)) // xs[-1], ws
        products = []
        input_gradient = MatrixProduct(rows, cols, depth, cols, right_transposed=True)  # w.T
        if ctx.needs_input_grad[0]:
            products.append(input_gradient)
        if ctx.needs_input_grad[1]:
            products.append(MatrixProduct(depth, rows, cols, rows, left_transposed=True))  # x.T
        products = products or [input_gradient]
        return OpCost(
            sum(p.flops for p in products),
            (int(np.prod(xs)) + int(np.prod(out))) * ctx.itemsize,
            (int(np.prod(xs)) + int(np.prod(ws))) * ctx.itemsize,
            int(np.prod(out)),
            tuple(products),
        )


def _check_shapes(x, w) -> None:
    if w.ndim != 2 or x.shape[-1] != w.shape[0]:
        raise ValueError(
            f"MatMul: cannot multiply shapes {x.shape} and {w.shape}: "
            f"the last axis of the first ({x.shape[-1]}) must equal the first axis of the second"
        )
