"""Portable numerics: the same float32 bits on every CPU, at the price of float64 arithmetic. Off by
default (training is about twice as fast without); the tests and tools/execute_notebooks.py turn it
on, so that committed notebook outputs are what every machine prints.

Why. numpy's BLAS picks a kernel per CPU (OpenBLAS: Haswell, SkylakeX, Zen, ARM; or MKL) and each
sums a matrix product's terms in its own order; numpy's ``exp``, ``log``, ``tanh``, ... have one
implementation per instruction set (found here: ``exp`` differs in the last bit for 39% of a million
float32 inputs between the AVX2 and the baseline code). In float32 the results differ in their last
bits, training drifts apart, and a notebook's printed accuracy differs in its fourth decimal from
machine to machine. Products of float32 numbers are exact in float64, a float64 sum of K of them is
off by about K * 2**-53 of its magnitude and a float64 ``exp`` by about 2**-52, far below float32's
2**-24: rounded once to float32, the results are the same bits whatever the kernel or instruction
set, except when the exact value lies within that tiny error of a float32 rounding boundary (none of
10 million 288-term sums, the tutorial's second convolution, differed across three kernels).
Addition, multiplication, division and ``sqrt`` are correctly rounded by IEEE 754 and need none of
this. The switch is ``set_portable_numerics``, or the environment variable IPU_TEACH_PORTABLE_NUMERICS
(1/true/yes/on or 0/false/no/off) read when ipu_teach is imported, as TensorFlow offers
``enable_op_determinism`` for reproducibility at a cost in speed.
"""

import os

import numpy as np

WIDE = np.float64
ENVIRONMENT_VARIABLE = "IPU_TEACH_PORTABLE_NUMERICS"
_SWITCH_WORDS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
    "": False,
}


def _from_environment() -> bool:
    value = os.environ.get(ENVIRONMENT_VARIABLE, "")
    if value.strip().lower() not in _SWITCH_WORDS:
        raise ValueError(
            f"{ENVIRONMENT_VARIABLE}={value!r} is not a switch: set it to 1 (portable numerics: the "
            "same bits on every CPU, about twice as slow) or 0 (off, the default)"
        )
    return _SWITCH_WORDS[value.strip().lower()]


_enabled = _from_environment()


def set_portable_numerics(enabled: bool) -> None:
    """Sum matrix products and compute exp/log/tanh/... in float64, rounded to float32 (True), or in
    float32 in whatever order this CPU's BLAS and SIMD code use (False, faster)."""
    global _enabled
    if not isinstance(enabled, bool):
        raise TypeError(f"set_portable_numerics takes True or False, got {enabled!r}")
    _enabled = enabled


def portable_numerics() -> bool:
    return _enabled


def compute_type(dtype):
    """The type to compute a result of type ``dtype`` in: float64 with portable numerics, else itself."""
    return WIDE if _enabled else dtype


def _wide(function):
    def rounded(x):
        if not _enabled:
            return function(x)
        return function(x.astype(WIDE, copy=False)).astype(x.dtype, copy=False)

    rounded.__name__ = function.__name__
    rounded.__doc__ = f"``np.{function.__name__}``; with portable numerics in float64, rounded to the input's type."
    return rounded


exp = _wide(np.exp)
expm1 = _wide(np.expm1)
log = _wide(np.log)
log1p = _wide(np.log1p)
tanh = _wide(np.tanh)


@_wide
def softplus(x):
    """log(1 + e**x) without overflow."""
    return np.logaddexp(0, x).astype(x.dtype, copy=False)
