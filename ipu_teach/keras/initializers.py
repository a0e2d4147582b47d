"""Weight initialisers with Keras' names and defaults (kernels glorot-uniform, biases zeros)."""

import numpy as np

from . import backend


def _fans(shape):
    """Keras' fan-in / fan-out: a conv kernel's receptive field multiplies its channel counts."""
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return shape[-2] * receptive, shape[-1] * receptive


class Initializer:
    def __call__(self, shape, dtype="float32"):
        raise NotImplementedError


class Zeros(Initializer):
    def __call__(self, shape, dtype="float32"):
        return np.zeros(shape, dtype=dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype="float32"):
        return np.ones(shape, dtype=dtype)


class Constant(Initializer):
    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype="float32"):
        return np.full(shape, self.value, dtype=dtype)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def _rng(self):
        return np.random.default_rng(self.seed) if self.seed is not None else backend.rng()

    def __call__(self, shape, dtype="float32"):
        return self._rng().normal(self.mean, self.stddev, size=shape).astype(dtype)


class RandomUniform(RandomNormal):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype="float32"):
        return self._rng().uniform(self.minval, self.maxval, size=shape).astype(dtype)


class VarianceScaling(RandomNormal):
    """Keras' family behind glorot and he: variance ``scale / fan``, normal (truncated) or uniform."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype="float32"):
        fan_in, fan_out = _fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, fan)
        rng = self._rng()
        if self.distribution == "uniform":
            limit = np.sqrt(3.0 * variance)
            return rng.uniform(-limit, limit, size=shape).astype(dtype)
        stddev = np.sqrt(variance) / 0.87962566103423978  # std of a unit normal truncated at 2 sigma
        values = rng.normal(0.0, stddev, size=shape)
        outside = np.abs(values) > 2 * stddev
        while outside.any():
            values[outside] = rng.normal(0.0, stddev, size=int(outside.sum()))
            outside = np.abs(values) > 2 * stddev
        return values.astype(dtype)


class Orthogonal(RandomNormal):
    """Keras' default for recurrent kernels: an orthogonal matrix (rows or columns), from the QR
    decomposition of a normal one, times ``gain``."""

    def __init__(self, gain=1.0, seed=None):
        self.gain, self.seed = gain, seed

    def __call__(self, shape, dtype="float32"):
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        a = self._rng().normal(size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))
        return (self.gain * (q.T if rows < cols else q)).reshape(shape).astype(dtype)


def GlorotUniform(seed=None):
    return VarianceScaling(1.0, "fan_avg", "uniform", seed)


def GlorotNormal(seed=None):
    return VarianceScaling(1.0, "fan_avg", "truncated_normal", seed)


def HeUniform(seed=None):
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


def HeNormal(seed=None):
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def LecunNormal(seed=None):
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


_BY_NAME = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_normal": RandomNormal,
    "random_uniform": RandomUniform,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
    "lecun_normal": LecunNormal,
    "orthogonal": Orthogonal,
}


def get(identifier) -> Initializer:
    if isinstance(identifier, Initializer):
        return identifier
    if callable(identifier):
        return identifier
    key = str(identifier).lower()
    if key not in _BY_NAME:
        raise ValueError(f"Unknown initializer {identifier!r}; choose one of {sorted(_BY_NAME)}")
    return _BY_NAME[key]()
