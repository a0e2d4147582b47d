"""``tf.random``: seeded random tensors, with TensorFlow's rules for the global and the operation seed.

``tf.random.set_seed(s)`` also seeds Keras (initial weights, dropout, shuffling of arrays in ``fit``),
as it does in TensorFlow, where Keras draws from TensorFlow's random ops. Without an operation seed a
call draws from that shared generator; with one, the values depend only on the global seed, the
operation seed and how many times that operation seed was used since ``set_seed`` (so re-running
after ``set_seed`` repeats them). Without ``set_seed`` the global seed is ipu-teach's fixed default,
so a script repeats exactly (TensorFlow would differ every run).
"""

import collections

import numpy as np

from ..dtypes import as_dtype
from ..keras import backend
from .tensor import dimensions, tensor

_global_seed = [backend.DEFAULT_SEED]
_uses = collections.Counter()


def set_seed(seed) -> None:
    """Set the global seed (and Keras' generator) and restart every operation seed's sequence."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"tf.random.set_seed: the seed must be an int >= 0, got {seed!r}")
    _global_seed[0] = int(seed)
    _uses.clear()
    backend.set_random_seed(int(seed))


def _generator(seed):
    if seed is None:
        return backend.rng()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"tf.random: the operation seed must be an int >= 0 or None, got {seed!r}")
    _uses[int(seed)] += 1
    return np.random.default_rng([_global_seed[0], int(seed), _uses[int(seed)]])


def uniform(shape, minval=0, maxval=None, dtype="float32", seed=None, name=None):
    """Values in [minval, maxval): maxval defaults to 1 for floats and must be given for integers."""
    dtype = as_dtype(dtype)
    rng, shape = _generator(seed), dimensions(shape)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError(f"tf.random.uniform: must specify maxval for integer dtype {dtype!r}")
        return tensor(rng.integers(minval, maxval, size=shape), dtype)
    if not dtype.is_floating:
        raise ValueError(f"tf.random.uniform: dtype must be a float or integer type, got {dtype!r}")
    return tensor(rng.uniform(minval, 1 if maxval is None else maxval, size=shape), dtype)


def normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    return tensor(_generator(seed).normal(mean, stddev, size=dimensions(shape)), dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """Normal values, with those more than two standard deviations from the mean drawn again."""
    rng, shape = _generator(seed), dimensions(shape)
    values = rng.standard_normal(shape)
    while (outside := np.abs(values) > 2).any():
        values[outside] = rng.standard_normal(int(outside.sum()))
    return tensor(mean + stddev * values, dtype)


def shuffle(value, seed=None, name=None):
    """``value`` with its first axis in a random order."""
    return tensor(_generator(seed).permutation(np.asarray(value)))
