"""Half-precision arithmetic as the IPU does it: autocasting, partial sums, stochastic rounding.

Three settings shape fp16 numerics, each held here so the ops can follow them without knowing
who set them (Keras layers, or the IPU executor from ``IPUConfig``):

- autocast: inside a layer whose policy computes in fp16, every floating input of an op is cast to
  fp16 first, as Keras' ``AutoCastVariable`` casts a mixed-precision layer's fp32 variables
  (keras ``mixed_precision/autocast_variable.py``). The cast is an op, so gradients flow back in fp32;
- partials: a product of fp16 operands adds its products in fp32 (``"float"``, Poplar's default and
  what a CPU does) or in fp16 (``"half"``, ``partialsType`` in ``IPUConfig.matmuls.poplar_options`` /
  ``convolutions.poplar_options``). With half partials the AMP adds one channel group's products
  (16 in fp16, ``hardware.IPUSpec.channel_group``) and rounds each running partial sum to fp16;
- stochastic rounding (``IPUConfig.floating_point_behaviour.esr``): when an fp16 value is written, it
  rounds up with probability equal to its distance from the fp16 below, over the gap between the two,
  so the rounding is right on average. Simulated where fp16 weights are written (weight updates),
  from a seeded generator, so runs are reproducible.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .. import hardware

_partials = {"matmul": "float", "conv": "float"}
_rounding = [None]  # the generator of stochastic rounding, None for round-to-nearest
_autocast = [None]  # (compute dtype, ids of the layer's variables) inside a layer's call
PARTIALS_TYPES = ("float", "half")


@contextlib.contextmanager
def autocast(dtype):
    """Ops applied inside compute in ``dtype``: their fp16 and fp32 inputs are cast to it (float64 ones are
    left alone, for gradient checks)."""
    _autocast.append(None if dtype is None else np.dtype(dtype))
    try:
        yield
    finally:
        _autocast.pop()


def compute_dtype():
    """The dtype the innermost autocasting layer computes in, or None."""
    return _autocast[-1]


@contextlib.contextmanager
def ipu_numerics(matmul_partials="float", conv_partials="float", rounding_rng=None):
    """Run the ops with the IPU's settings: partials types, and stochastic rounding when a generator is given."""
    saved = dict(_partials), _rounding[0]
    _partials.update(matmul=matmul_partials, conv=conv_partials)
    _rounding[0] = rounding_rng
    try:
        yield
    finally:
        _partials.update(saved[0])
        _rounding[0] = saved[1]


def half_product(a: np.ndarray, b: np.ndarray, kind: str = "matmul") -> np.ndarray:
    """``a @ b`` of fp16 operands as the matrix units compute it, in fp16, with ``kind``'s partials type."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    if _partials[kind] == "float":
        return (a32 @ b32).astype(np.float16)
    group = hardware.MK2.channel_group("float16")
    out = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for start in range(0, a.shape[1], group):  # each group's products summed exactly, the running sum in fp16
        out = (out.astype(np.float32) + a32[:, start:start + group] @ b32[start:start + group]).astype(np.float16)
    return out


def stochastic_round(values, rng) -> np.ndarray:
    """``values`` rounded to fp16, up or down at random with the probabilities that make it exact on average."""
    x = np.asarray(values, np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # values past fp16's range overflow to inf, as on the IPU
        nearest = x.astype(np.float16)
        below = np.where(nearest.astype(np.float64) > x, np.nextafter(nearest, np.float16(-np.inf)), nearest)
        above = np.nextafter(below, np.float16(np.inf))
        gap = above.astype(np.float64) - below.astype(np.float64)
        p_up = np.where(np.isfinite(gap) & (gap > 0), (x - below.astype(np.float64)) / np.where(gap > 0, gap, 1), 0)
    rounded = np.where(rng.random(x.shape) < p_up, above, below)
    return np.where(np.isfinite(nearest), rounded, nearest).astype(np.float16)  # overflow stays inf


def write(target: np.ndarray, value) -> None:
    """Store ``value`` into ``target`` in place, rounding to fp16 stochastically when that is on."""
    if target.dtype == np.float16 and _rounding[0] is not None:
        target[...] = stochastic_round(value, _rounding[0])
    else:
        target[...] = value


def check_partials_type(value, where: str) -> str:
    """Poplar's names for the partials type; anything else is an error naming the option."""
    if value not in PARTIALS_TYPES:
        raise ValueError(f"{where}: partialsType must be 'float' or 'half' (Poplar's names for float32 and "
                         f"float16), got {value!r}")
    return value
