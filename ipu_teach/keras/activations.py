"""Activation functions by Keras name, applied to Tensors."""

from ..autograd import ops


def linear(x):
    return x


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras' ``relu``: ``max(x, 0)``, or with a slope ``alpha`` below ``threshold`` and a ceiling
    ``max_value`` (tf-keras ``backend.relu``)."""
    if alpha == 0 and max_value is None and threshold == 0:
        return ops.relu(x)
    return ops.general_relu(x, alpha=float(alpha), max_value=max_value, threshold=float(threshold))


def sigmoid(x):
    return ops.sigmoid(x)


def tanh(x):
    return ops.tanh(x)


def softmax(x):
    return ops.softmax(x)


def softplus(x):
    return ops.softplus(x)


def elu(x, alpha=1.0):
    return ops.elu(x, alpha=alpha)


def exponential(x):
    return ops.exp(x)


def gelu(x, approximate=False):
    return ops.gelu(x, approximate=approximate)


_BY_NAME = {f.__name__: f for f in (linear, relu, sigmoid, tanh, softmax, softplus, elu, exponential, gelu)}


def get(identifier):
    if identifier is None:
        return linear
    if callable(identifier):
        return identifier
    if identifier not in _BY_NAME:
        raise ValueError(f"Unknown activation {identifier!r}; choose one of {sorted(_BY_NAME)}")
    return _BY_NAME[identifier]


def serialize(activation) -> str:
    return getattr(activation, "__name__", str(activation))


def names() -> list:
    return sorted(_BY_NAME)
