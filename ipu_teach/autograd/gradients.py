"""Gradients of some tensors with respect to chosen leaves, leaving every ``grad`` as it was.

``Tensor.backward`` accumulates into the ``grad`` of every leaf it reaches (what ``fit`` reads, then clears).
``tf.GradientTape.gradient`` and a Keras optimizer's ``minimize`` ask instead for the gradients of a few sources
and must not disturb the others: this runs the same backward pass and gives those back.

Example:

>>> from ipu_teach.autograd import Tensor, gradients, ops
>>> w = Tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
>>> gradients.of([ops.reduce_sum(ops.mul(w, w))], [w])
[array([2., 4.], dtype=float32)]
>>> w.grad is None
True
"""

import numpy as np

from .graph_order import post_order
from .tensor import Tensor


def of(targets, sources, seeds=None) -> list:
    """Each source's gradient of the sum of ``targets`` (each seeded with ``seeds``, ones by default), None where
    none flows. A target that is itself a source has gradient one (times its seed) with respect to itself."""
    seeds = [None] * len(targets) if seeds is None else list(seeds)
    leaves = [
        t
        for t in post_order(targets, lambda t: [p for p in t.node.inputs if p.requires_grad] if t.node else [])
        if t.node is None
    ]
    saved = [(leaf, leaf.grad) for leaf in leaves]
    try:
        for leaf in leaves:
            leaf.grad = None
        for target, seed in zip(targets, seeds):
            seed = np.ones_like(target.array) if seed is None else np.asarray(seed, target.dtype)
            if target.node is None:
                target.grad = seed if target.grad is None else target.grad + seed
            else:
                target.backward(seed)
        return [source.grad for source in sources]
    finally:
        for leaf, grad in saved:
            leaf.grad = grad


def carries_gradient(value) -> bool:
    """Whether gradients can flow back from ``value``: a Tensor made by ops from leaves that need them, or one."""
    return isinstance(value, Tensor) and (value.node is not None or value.requires_grad)
