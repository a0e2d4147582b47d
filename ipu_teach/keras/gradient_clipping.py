"""Gradient clipping as Keras 2.6 optimizers do it before each update (``optimizer_v2/utils.py``): by value,
by each gradient's norm, or by the norm of all of them together, with TensorFlow's ``clip_by_value``,
``clip_by_norm`` and ``clip_by_global_norm`` formulas, in the gradients' dtype.

Example:

>>> grads = [np.array([3.0, 4.0], np.float32)]
>>> [g.tolist() for g in clipped(grads, clipvalue=None, clipnorm=1.0, global_clipnorm=None)]
[[0.6000000238418579, 0.800000011920929]]
"""

import numpy as np


def clipped(grads, clipvalue, clipnorm, global_clipnorm) -> list:
    """``grads`` clipped in Keras' order: by value, then each by its norm, then all by their global norm."""
    if clipvalue is not None:
        grads = [np.clip(g, -g.dtype.type(clipvalue), g.dtype.type(clipvalue)) for g in grads]
    if clipnorm is not None:
        grads = [_clip_by_norm(g, clipnorm) for g in grads]
    if global_clipnorm is not None and grads:
        grads = _clip_by_global_norm(grads, global_clipnorm)
    return grads


def _clip_by_norm(grad, clip_norm):
    """``grad * clip_norm / max(norm, clip_norm)``: unchanged when its L2 norm is at most ``clip_norm``."""
    kind = grad.dtype.type
    norm = np.sqrt(np.sum(grad * grad))
    return (grad * kind(clip_norm)) / np.maximum(norm, kind(clip_norm))


def _clip_by_global_norm(grads, clip_norm):
    """Every gradient times ``clip_norm * min(1 / global_norm, 1 / clip_norm)``; an infinite norm gives NaNs,
    as in TensorFlow."""
    kind = grads[0].dtype.type
    global_norm = np.sqrt(sum(np.sum(g.astype(kind) * g.astype(kind)) for g in grads))
    if not np.isfinite(global_norm):
        global_norm = kind(np.nan)
    with np.errstate(divide="ignore"):  # all gradients zero: 1 / 0 is inf and the minimum 1 / clip_norm
        scale = kind(clip_norm) * np.minimum(kind(1) / global_norm, kind(1) / kind(clip_norm))
    return [g * scale.astype(g.dtype) for g in grads]
