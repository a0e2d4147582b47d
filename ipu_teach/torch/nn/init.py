"""``torch.nn.init``: PyTorch's initialisers, in place on a tensor, drawing from ``torch``'s generator.

The default initialisation of ``nn.Linear`` and ``nn.Conv2d`` is ``kaiming_uniform_(w, a=sqrt(5))`` (a bound
of ``1 / sqrt(fan_in)``) and a bias uniform in the same bound (torch/nn/modules/linear.py ``reset_parameters``).

Example:

>>> from ipu_teach import torch
>>> w = torch.empty(4, 9)
>>> _ = torch.nn.init.kaiming_uniform_(w, a=5 ** 0.5)
>>> bool(w.abs().max() <= 1 / 3)
True
"""

import math

import numpy as np

from ..random import numpy_generator

_GAINS = {"linear": 1.0, "conv2d": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4}


def calculate_gain(nonlinearity, param=None) -> float:
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = int(np.prod(tensor.array.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.array.shape[1] * receptive, tensor.array.shape[0] * receptive


def _fill(tensor, values):
    tensor.array[...] = values
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, numpy_generator(generator).uniform(a, b, tensor.array.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, numpy_generator(generator).normal(mean, std, tensor.array.shape))


def constant_(tensor, val):
    return _fill(tensor, val)


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def _fan(tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def default_reset(weight, bias) -> None:
    """PyTorch's default for Linear and Conv layers: kaiming_uniform_(a=sqrt(5)), bias in +-1/sqrt(fan_in)."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
