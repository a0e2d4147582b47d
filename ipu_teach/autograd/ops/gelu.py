"""GELU, the Gaussian error linear unit of BERT and most transformers: ``x * Phi(x)``, Phi the standard
normal distribution function.

Keras' ``activations.gelu(x, approximate=False)`` computes ``0.5 * x * (1 + erf(x / sqrt(2)))``; with
``approximate=True`` Phi becomes ``0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``, which is
what Graphcore's popnn ``NonLinearityType::GELU`` computes on the IPU (poplibs ``NonLinearityDef.hpp``).
Both run on the tiles' vector units: the op declares no matrix products, and states its arithmetic per
element (erf, exp and tanh count one each, as in the other activations).
"""

import math

import numpy as np

from ..cost import OpCost, elementwise
from ..function import Function
from ..symbolic import like
from . import portable

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_CUBIC = 0.044715
_erf = np.frompyfunc(math.erf, 1, 1)
FLOPS_PER_ELEMENT = {False: (5, 11), True: (9, 13)}
"""(forward, backward) per element. Exact: x / sqrt(2), erf, + 1, * 0.5, * x; backward Phi (4), the
density exp(-x * x / 2) / sqrt(2 pi) (4), grad * (Phi + x * density) (3). Approximate: the cubic inner
term (5), tanh, + 1, * 0.5, * x; backward (1 + t) / 2 (2), 1 - t * t (2), c * (1 + 3a x * x) (4),
their product with x / 2 (3), the sum and the product with grad (2)."""


def _phi(x):
    """The standard normal distribution function, in float64 (Python's erf: the same bits on every CPU)."""
    return 0.5 * (1 + _erf(x.astype(np.float64) / math.sqrt(2)).astype(np.float64))


class GELUOp(Function):
    @classmethod
    def infer(cls, ctx, x, approximate=False):
        ctx.approximate = bool(approximate)
        return like(x)

    @staticmethod
    def forward(ctx, x, approximate=False):
        ctx.approximate = bool(approximate)
        if ctx.approximate:
            t = portable.tanh(_SQRT_2_OVER_PI * (x + _CUBIC * x * x * x))
            ctx.save_for_backward(x, t)
            return 0.5 * x * (1 + t)
        ctx.save_for_backward(x)
        return (x * _phi(x)).astype(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.approximate:
            x, t = ctx.saved
            inner = _SQRT_2_OVER_PI * (1 + 3 * _CUBIC * x * x)
            return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner)
        (x,) = ctx.saved
        density = portable.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        return grad * (_phi(x) + x * density).astype(x.dtype)

    @classmethod
    def cost(cls, ctx) -> OpCost:
        return cls._per_element(ctx, FLOPS_PER_ELEMENT[ctx.approximate][0])

    @classmethod
    def backward_cost(cls, ctx) -> OpCost:
        return cls._per_element(ctx, FLOPS_PER_ELEMENT[ctx.approximate][1])

    @staticmethod
    def _per_element(ctx, flops) -> OpCost:
        n = int(np.prod(ctx.output_shape))
        return OpCost(flops * n, n * ctx.itemsize, n * ctx.itemsize, n, (), elementwise("gelu", n))
