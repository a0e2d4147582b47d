"""Weight regularizers (tf-keras ``keras.regularizers``): L1, L2 and L1L2 penalties that a layer's
``kernel_regularizer`` (and the like) adds to ``model.losses`` and so to the training loss.

A penalty is computed from the current weights each time ``losses`` is read, from the autograd's ops (Abs,
Mul, Sum), so its gradient reaches the weights and the simulated IPU costs it with the step, as Keras
adds it to the loss it differentiates.

Example:

>>> keras.regularizers.l2(0.5)(np.array([1.0, -2.0], np.float32)).data
array(2.5, dtype=float32)
"""

import math

import numpy as np

from ..autograd import Tensor, ops


def _penalty(value):
    """Keras' ``_check_penalty_number``: a finite int or float, as a float32 number."""
    if not isinstance(value, (float, int)):
        raise ValueError(f"Value {value} is not a valid regularization penalty number, expected an int or float value.")
    if math.isinf(value) or math.isnan(value):
        raise ValueError(
            f"Value {value} is not a valid regularization penalty number, "
            "an infinite number or NaN are not valid values."
        )
    return float(np.float32(value))


class Regularizer:
    """Base class: ``__call__(weight)`` returns the scalar penalty; ``get_config`` / ``from_config``."""

    def __call__(self, x):
        return Tensor(np.zeros((), np.float32))

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)`` (defaults 0, as Keras' class; the name ``"l1_l2"`` means 0.01 each)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _penalty(0.0 if l1 is None else l1)
        self.l2 = _penalty(0.0 if l2 is None else l2)

    def __call__(self, x):
        x = x if isinstance(x, Tensor) else Tensor(np.asarray(x, np.float32))
        total = None
        for factor, term in ((self.l1, ops.absolute), (self.l2, lambda t: ops.mul(t, t))):
            if factor:
                value = ops.mul(ops.reduce_sum(term(x)), np.asarray(factor, x.dtype))
                total = value if total is None else ops.add(total, value)
        return total if total is not None else Tensor(np.zeros((), x.dtype))

    def get_config(self) -> dict:
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """``l1 * sum(|x|)``, default ``l1=0.01``."""

    def __init__(self, l1=0.01):
        super().__init__(l1=0.01 if l1 is None else l1)

    def get_config(self) -> dict:
        return {"l1": self.l1}


class L2(L1L2):
    """``l2 * sum(x ** 2)``, default ``l2=0.01``."""

    def __init__(self, l2=0.01):
        super().__init__(l2=0.01 if l2 is None else l2)

    def get_config(self) -> dict:
        return {"l2": self.l2}


l1 = L1
l2 = L2


def l1_l2(l1=0.01, l2=0.01):
    return L1L2(l1=l1, l2=l2)


_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": l1_l2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier):
    """A regularizer from None, a name (``"l1"``, ``"l2"``, ``"l1_l2"``: Keras' defaults), a config dict
    (``{"class_name": "L2", "config": {"l2": 0.1}}``) or a callable (returned as is)."""
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict) and isinstance(identifier.get("class_name"), str):
        cls = {"L1": L1, "L2": L2, "L1L2": L1L2}.get(identifier["class_name"])
        if cls is not None:
            return cls.from_config(dict(identifier.get("config", {})))
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    raise ValueError(
        f"Could not interpret regularizer identifier: {identifier}; "
        "use 'l1', 'l2', 'l1_l2' or a keras.regularizers object"
    )


def serialize(regularizer):
    """Keras' form ``{"class_name": ..., "config": ...}`` (None for None)."""
    if regularizer is None:
        return None
    if not isinstance(regularizer, Regularizer):
        raise ValueError(f"Cannot save the regularizer {regularizer!r}: ipu-teach saves keras.regularizers objects")
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}
