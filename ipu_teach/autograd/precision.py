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

Example:

>>> from ipu_teach.autograd import precision
>>> rounded = precision.stochastic_round(np.full(1000, 1 + 0.5 * 2.0**-10), np.random.default_rng(0))
>>> 0.4 < float((rounded > 1).mean()) < 0.6       # half-way: up about half the time
True
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
    depth = len(_autocast)
    try:  # pushed inside the try: a Ctrl-C right after the push still pops it
        _autocast.append(None if dtype is None else np.dtype(dtype))
        yield
    finally:
        del _autocast[depth:]


def compute_dtype():
    """The dtype the innermost autocasting layer computes in, or None."""
    return _autocast[-1]


@contextlib.contextmanager
def ipu_numerics(matmul_partials="float", conv_partials="float", rounding_rng=None):
    """Returns a context manager that runs the ops with the IPU's half-precision settings.

    The partials type is the precision in which fp16 matrix products and convolutions add up their
    products: ``"float"`` (fp32, Poplar's default) or ``"half"`` (faster and smaller on the IPU, but a
    long sum loses accuracy). With a generator, fp16 weight updates round stochastically, as the IPU's
    ``floating_point_behaviour.esr`` does, so small updates are not lost on average.

    Args:
      matmul_partials: ``"float"`` or ``"half"``, for matrix products. Default: ``"float"``.
      conv_partials: ``"float"`` or ``"half"``, for convolutions. Default: ``"float"``.
      rounding_rng: Optional ``numpy.random.Generator`` turning stochastic rounding on. Default: None.

    Example:

    >>> from ipu_teach.autograd import Tensor, ops, precision
    >>> a = np.full((1, 4096), 0.1, np.float16)
    >>> b = np.full((4096, 1), 0.1, np.float16)
    >>> with precision.ipu_numerics(matmul_partials="half"):
    ...     half = float(ops.matmul(Tensor(a), Tensor(b)).data[0, 0])
    >>> float_ = float(ops.matmul(Tensor(a), Tensor(b)).data[0, 0])
    >>> round(float_), half < float_               # half partials lose part of the long sum
    (41, True)
    """
    saved = dict(_partials), _rounding[0]
    try:  # set inside the try: a Ctrl-C right after setting still restores them
        _partials.update(matmul=matmul_partials, conv=conv_partials)
        _rounding[0] = rounding_rng
        yield
    finally:
        _rounding[0] = saved[1]
        _partials.update(saved[0])


def half_product(a: np.ndarray, b: np.ndarray, kind: str = "matmul") -> np.ndarray:
    """``a @ b`` of fp16 operands as the matrix units compute it, in fp16, with ``kind``'s partials type."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    if _partials[kind] == "float":
        return (a32 @ b32).astype(np.float16)
    group = hardware.MK2.channel_group("float16")
    out = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for start in range(0, a.shape[1], group):  # each group's products summed exactly, the running sum in fp16
        out = (out.astype(np.float32) + a32[:, start : start + group] @ b32[start : start + group]).astype(np.float16)
    return out


def stochastic_round(values, rng) -> np.ndarray:
    """Returns ``values`` rounded to fp16, up or down at random with the probabilities that make it exact on average.

    A value 30% of the way between two fp16 neighbours rounds up with probability 0.3: repeated small
    updates then add up on average instead of being rounded away (the IPU's stochastic rounding).
    Values past fp16's range overflow to inf, as on the IPU.

    Args:
      values: Array-like of values.
      rng: A ``numpy.random.Generator``.

    Returns:
      A float16 array.

    Example:

    >>> from ipu_teach.autograd import precision
    >>> value = 1 + 0.3 * 2.0**-10                    # 30% of the way from 1 to the next fp16 number
    >>> rounded = precision.stochastic_round(np.full(10_000, value), np.random.default_rng(0))
    >>> sorted(set(rounded.tolist())), round(float((rounded > 1).mean()), 1)
    ([1.0, 1.0009765625], 0.3)
    """
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
    """Stores ``value`` into ``target`` in place, rounding to fp16 stochastically when that is on.

    How optimizers write fp16 weights: with round-to-nearest an update smaller than half the spacing of
    fp16 is lost; inside ``ipu_numerics(rounding_rng=...)`` it survives on average.

    Args:
      target: The numpy array to write (a weight).
      value: Array-like, the new value.

    Example:

    >>> from ipu_teach.autograd import precision
    >>> weights = np.ones(1000, np.float16)
    >>> precision.write(weights, weights.astype(np.float32) - 1e-4)     # round to nearest: lost
    >>> int((weights < 1).sum())
    0
    >>> with precision.ipu_numerics(rounding_rng=np.random.default_rng(0)):
    ...     precision.write(weights, weights.astype(np.float32) - 1e-4)
    >>> 100 < int((weights < 1).sum()) < 300                          # about 1 in 5 rounded down
    True
    """
    if target.dtype == np.float16 and _rounding[0] is not None:
        target[...] = stochastic_round(value, _rounding[0])
    else:
        target[...] = value


def check_partials_type(value, where: str) -> str:
    """Poplar's names for the partials type; anything else is an error naming the option."""
    if value not in PARTIALS_TYPES:
        raise ValueError(
            f"{where}: partialsType must be 'float' or 'half' (Poplar's names for float32 and float16), got {value!r}"
        )
    return value
