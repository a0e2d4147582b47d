"""``tf`` functions on tensors that carry gradients: the autograd's op, so ``tf.GradientTape`` can differentiate.

The ``tf`` functions compute on numpy (input pipelines, metrics). Given an autograd Tensor (a Keras
model's output, a loss, a ``tf.Variable``) they apply the autograd op with the same result instead, so
the value keeps its link back to the weights; a function with no such op refuses a tensor that needs a
gradient, rather than silently cutting the gradient's path.
"""

from ..autograd import Tensor
from ..not_simulated import shown_name


def carries_gradient(*values) -> bool:
    """Whether any of ``values`` is an autograd Tensor (the other values are then its constants)."""
    return any(isinstance(v, Tensor) for v in values)


def needs_gradient(*values) -> bool:
    return any(isinstance(v, Tensor) and (v.requires_grad or v.node is not None) for v in values)


def not_differentiable(name: str) -> ValueError:
    """The error for ``tf.<name>`` given a tensor that needs a gradient, when ipu-teach has no op for it."""
    return ValueError(
        f"{shown_name('tensorflow.' + name)} is not differentiable in ipu-teach: it was given a tensor that "
        "needs a gradient (computed from weights or a tf.Variable). Use tf.add, tf.subtract, tf.multiply, "
        "tf.divide, tf.square, tf.exp, tf.log, tf.tanh, tf.sigmoid, tf.reduce_sum, tf.reduce_mean, tf.matmul, "
        "tf.reshape or a Keras loss, or compute it outside the GradientTape"
    )
