"""Elementary functions that give the same float32 bits on every CPU: computed in float64, rounded once.

numpy picks an implementation of ``exp``, ``log``, ``tanh``, ... per CPU (AVX-512, AVX2, baseline
SSE, ARM's NEON or the C library); in float32 they differ in the last bit for a large share of
inputs (found here: ``exp`` on 39% of a million inputs between the AVX2 and the baseline code), and
training drifts apart from machine to machine. Each float64 implementation is within about one
float64 unit (2**-52) of the true value, far below float32's 2**-24, so rounding its result to
float32 gives the same bits on every CPU, except in the rare case where the true value lies that
close to a float32 rounding boundary. Addition, multiplication, division and ``sqrt`` are
correctly rounded by IEEE 754 and need none of this. The matrix products' version of the same idea
is in ``gemm``.
"""
import numpy as np

WIDE = np.float64


def _wide(function):
    def rounded(x):
        return function(x.astype(WIDE, copy=False)).astype(x.dtype, copy=False)

    rounded.__name__ = function.__name__
    rounded.__doc__ = f"``np.{function.__name__}`` computed in float64 and rounded to the input's type."
    return rounded


exp = _wide(np.exp)
expm1 = _wide(np.expm1)
log = _wide(np.log)
log1p = _wide(np.log1p)
tanh = _wide(np.tanh)


@_wide
def softplus(x):
    """log(1 + e**x) without overflow."""
    return np.logaddexp(0, x)
