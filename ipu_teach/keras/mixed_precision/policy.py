"""Dtype policies (keras ``mixed_precision/policy.py``): a layer's compute dtype and variable dtype."""

from __future__ import annotations

import numpy as np

_FLOATS = ("float16", "float32", "float64")


class Policy:
    """``'mixed_float16'`` (compute fp16, variables fp32) or one float dtype for both."""

    def __init__(self, name):
        if isinstance(name, Policy):
            name = name.name
        name = getattr(name, "name", name)  # tf.float16 and numpy dtypes name themselves
        if name == "mixed_bfloat16":
            raise ValueError(
                "Policy 'mixed_bfloat16' is not simulated: the IPU computes in float16 and float32; use 'mixed_float16'"
            )
        if name == "mixed_float16":
            self._compute, self._variable = "float16", "float32"
        elif isinstance(name, str) and name in _FLOATS:
            self._compute = self._variable = name
        else:
            raise ValueError(
                f"Cannot convert value {name!r} to a mixed precision Policy. Valid policies include "
                "'mixed_float16' and the name of a float dtype such as 'float32' or 'float16'"
            )
        self._name = name

    name = property(lambda self: self._name)
    compute_dtype = property(lambda self: self._compute)
    variable_dtype = property(lambda self: self._variable)

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f'<Policy "{self.name}">'


_global = [Policy("float32")]


def set_global_policy(policy) -> None:
    """Sets the global dtype policy: the policy of the layers created from now on.

    ``"mixed_float16"`` makes layers compute in fp16 and keep their weights in fp32. On the IPU the AMP
    does 4 times the FLOPs per cycle in fp16 (128 against 32 per tile) and activations take half the bytes,
    so more fits in tile memory; ``compile`` then wraps the optimizer in a ``LossScaleOptimizer``.

    Args:
      policy: A policy name (``"mixed_float16"``, ``"float32"``, ``"float16"``) or a ``Policy``; None goes
        back to ``"float32"``.

    Example:

    >>> keras.mixed_precision.set_global_policy("mixed_float16")
    >>> layer = keras.layers.Dense(2)
    >>> layer.compute_dtype, layer.variable_dtype
    ('float16', 'float32')
    >>> keras.mixed_precision.set_global_policy("float32")
    """
    _global[0] = Policy("float32" if policy is None else policy)


def global_policy() -> Policy:
    """Returns the global dtype policy, used by layers created without a ``dtype``.

    Example:

    >>> keras.mixed_precision.global_policy()
    <Policy "float32">
    """
    return _global[0]


def for_layer(dtype) -> Policy:
    """A layer's policy from its ``dtype=`` argument: a Policy, a policy or dtype name, or None (global)."""
    if dtype is None:
        return global_policy()
    return dtype if isinstance(dtype, Policy) else Policy(np.dtype(dtype).name if isinstance(dtype, type) else dtype)
