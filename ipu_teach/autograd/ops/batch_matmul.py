"""Batched matrix multiply, the op behind attention's scores and their weighted sum:
``a (..., m, k) @ b (..., k, n)`` with the same leading (batch) axes on both, as ``tf.matmul`` of two
tensors and poplin's grouped matmul (``poplin::matMulGrouped``: one independent product per group).

Cost. poplin plans a grouped matmul as one product whose groups are spread over the tiles as its
rows are, so the op declares one :class:`MatrixProduct` of ``groups * m`` rows (a stated
approximation: each group still receives its own ``b``, which the rows' exchange counts once).
"""

import math

import numpy as np

from ..cost import MatrixProduct, OpCost
from ..function import Function
from ..symbolic import like, result_dtype
from .gemm import matmul


class BatchMatMulOp(Function):
    @staticmethod
    def forward(ctx, a, b):
        _check_shapes(a, b)
        ctx.save_for_backward(a, b)
        return _batched(a, b)

    @classmethod
    def infer(cls, ctx, a, b):
        _check_shapes(a, b)
        return like(a, a.shape[:-1] + b.shape[-1:], result_dtype(a, b))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved
        ga = _batched(grad, np.swapaxes(b, -1, -2)) if ctx.needs_input_grad[0] else None
        gb = _batched(np.swapaxes(a, -1, -2), grad) if ctx.needs_input_grad[1] else None
        return ga, gb

    @classmethod
    def cost(cls, ctx):
        groups, m, k, n = _dimensions(ctx)
        product = MatrixProduct(groups * m, k, n, k)
        return _cost(ctx, (product,), inputs=groups * (m * k + k * n), outputs=groups * m * n)

    @classmethod
    def backward_cost(cls, ctx):
        """``grad @ b^T`` for ``a`` and ``a^T @ grad`` for ``b``, each where needed, as grouped products."""
        groups, m, k, n = _dimensions(ctx)
        products = []
        a_gradient = MatrixProduct(groups * m, n, k, n, right_transposed=True)  # b^T
        if ctx.needs_input_grad[0]:
            products.append(a_gradient)
        if ctx.needs_input_grad[1]:
            products.append(MatrixProduct(groups * k, m, n, m, left_transposed=True))  # a^T
        products = products or [a_gradient]
        return _cost(ctx, tuple(products), inputs=groups * (m * k + k * n + m * n), outputs=groups * (m * k + k * n))


def _batched(a, b):
    """Each group's product through ``gemm.matmul`` (the IPU's numerics, fp16 partials included)."""
    out = np.empty(a.shape[:-1] + b.shape[-1:], dtype=result_dtype(a, b))
    a3, b3 = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    flat = out.reshape((-1,) + out.shape[-2:])
    for g in range(flat.shape[0]):
        flat[g] = matmul(a3[g], b3[g])
    return out


def _dimensions(ctx):
    (a_shape, b_shape) = ctx.input_shapes
    return math.prod(a_shape[:-2]), a_shape[-2], a_shape[-1], b_shape[-1]


def _cost(ctx, products, inputs, outputs):
    groups, m, _, n = _dimensions(ctx)
    return OpCost(
        sum(p.flops for p in products), inputs * ctx.itemsize, outputs * ctx.itemsize, groups * m * n, products
    )


def _check_shapes(a, b) -> None:
    if a.ndim < 3 or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"BatchMatMul: cannot multiply shapes {a.shape} and {b.shape}: both need the same leading (batch) axes "
            "and at least 3 axes, and the last axis of the first must equal the second-last of the second "
            "(for a matrix second operand use MatMul)"
        )
