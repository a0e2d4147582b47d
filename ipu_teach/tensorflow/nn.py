"""``tf.nn``: the activations and the cross-entropies with logits that custom training loops write losses with.

Each applies the autograd op a Keras layer or loss uses (same numerics), so on a model's output or a
``tf.Variable`` the result keeps its gradient for ``tf.GradientTape``; on arrays the result is an array.

Example:

>>> import ipu_teach.tensorflow as tf
>>> logits = tf.Variable([[2.0, 0.0, -1.0]])
>>> with tf.GradientTape() as tape:
...     loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=logits))
>>> np.round(tape.gradient(loss, logits), 3)
array([[-0.156,  0.114,  0.042]], dtype=float32)
"""

import numpy as np

from ..autograd import ops
from .differentiable import carries_gradient as _carries_gradient
from .math import sigmoid, tanh  # noqa: F401 (tf.nn.sigmoid and tf.nn.tanh are tf.math's)
from .tensor import tensor as _tensor


def _applied(result, *inputs):
    """An op's result: the Tensor itself when an input is one (it carries the gradient), else its values."""
    return result if _carries_gradient(*inputs) else _tensor(result.data)


def _last_axis(axis, name):
    if axis not in (None, -1):
        raise ValueError(f"tf.nn.{name}: ipu-teach computes it over the last axis only (axis=-1), got axis={axis}")


def relu(features, name=None):
    return _applied(ops.relu(features), features)


def softmax(logits, axis=None, name=None):
    """Softmax over the last axis."""
    _last_axis(axis, "softmax")
    return _applied(ops.softmax(logits), logits)


def log_softmax(logits, axis=None, name=None):
    """``logits - log(sum(exp(logits)))`` over the last axis, shifted by each row's maximum (a constant, so the
    gradient is unchanged) so that large logits do not overflow."""
    _last_axis(axis, "log_softmax")
    shift = np.max(np.asarray(logits), axis=-1, keepdims=True)
    shifted = ops.sub(logits, shift)
    result = ops.sub(shifted, ops.log(ops.reduce_sum(ops.exp(shifted), axis=-1, keepdims=True)))
    return _applied(result, logits)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Each sample's cross-entropy between the distribution ``labels`` and ``softmax(logits)``."""
    _last_axis(axis, "softmax_cross_entropy_with_logits")
    labels = np.asarray(labels, dtype=np.asarray(logits).dtype)
    return _applied(ops.softmax_cross_entropy(logits, labels), logits)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Each sample's cross-entropy between the class index ``labels`` and ``softmax(logits)``."""
    labels = np.asarray(labels).astype(np.int64)
    if labels.shape != np.shape(logits)[:-1]:
        raise ValueError(
            f"tf.nn.sparse_softmax_cross_entropy_with_logits: labels of shape {labels.shape} need the shape of "
            f"logits without its last axis, {np.shape(logits)[:-1]}"
        )
    return _applied(ops.sparse_softmax_cross_entropy(logits, labels), logits)


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``, as weight decay terms use it."""
    return _applied(ops.mul(ops.reduce_sum(ops.mul(t, t)), 0.5), t)


def bias_add(value, bias, data_format=None, name=None):
    return _applied(ops.add(value, bias), value, bias)
