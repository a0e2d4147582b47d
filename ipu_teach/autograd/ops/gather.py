"""Gather: rows of a table picked by integer indices, the op behind ``keras.layers.Embedding``.

Poplar runs it as a multi-slice (forward) and a multi-update-add (backward): moving rows, one
operation per output element, split into one grain per row looked up.
"""

import numpy as np

from ..cost import OpCost
from ..function import Function
from ..symbolic import like


class GatherOp(Function):
    @staticmethod
    def forward(ctx, table, indices):
        ctx.indices = indices.astype(np.int64)
        if ctx.indices.size and (ctx.indices.min() < 0 or ctx.indices.max() >= table.shape[0]):
            raise ValueError(
                f"Gather: indices must be in [0, {table.shape[0]}), got values from "
                f"{ctx.indices.min()} to {ctx.indices.max()}"
            )
        return table[ctx.indices]

    @classmethod
    def infer(cls, ctx, table, indices):
        """The indices' values are unknown: only their shape, and none is checked against the table."""
        return like(table, indices.shape + table.shape[1:])

    @staticmethod
    def backward(ctx, grad):
        table_grad = np.zeros(ctx.input_shapes[0], dtype=grad.dtype)
        np.add.at(table_grad, ctx.indices.ravel(), grad.reshape(-1, table_grad.shape[-1]))
        return table_grad, None

    @classmethod
    def cost(cls, ctx):
        out = int(np.prod(ctx.output_shape))
        rows = int(np.prod(ctx.input_shapes[1]))
        return OpCost(out, (rows + out) * ctx.itemsize, out * ctx.itemsize, rows)

    @classmethod
    def backward_cost(cls, ctx):
        return cls.cost(ctx)  # one add per gathered element, into the table's gradient
