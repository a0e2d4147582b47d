"""``tf.clip_by_norm``, ``tf.clip_by_global_norm``, ``tf.linalg.global_norm``: gradient clipping in custom loops.

They take the gradients ``tape.gradient`` gives (arrays; None entries stay None, as in TensorFlow) and scale them
so that their L2 norm is at most ``clip_norm``, with TensorFlow's formula ``t * clip_norm / max(norm, clip_norm)``.

Example:

>>> import ipu_teach.tensorflow as tf
>>> clipped, norm = tf.clip_by_global_norm([np.array([3.0, 0.0]), None, np.array([4.0])], 1.0)
>>> float(norm), clipped[0].numpy(), clipped[1], clipped[2].numpy()
(5.0, array([0.6, 0. ]), None, array([0.8]))
"""

import numpy as np

from .tensor import tensor


def global_norm(t_list, name=None):
    """The L2 norm of all the values of ``t_list`` together (None entries ignored)."""
    return tensor(np.sqrt(sum(float(np.sum(np.square(t))) for t in t_list if t is not None)))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(clipped list, global norm)``: every tensor scaled by ``clip_norm / max(global_norm, clip_norm)``."""
    norm = global_norm(t_list) if use_norm is None else tensor(np.asarray(use_norm, np.float64))
    scale = float(clip_norm) / max(float(norm), float(clip_norm))
    clipped = [None if t is None else tensor((np.asarray(t) * scale).astype(np.asarray(t).dtype)) for t in t_list]
    return clipped, norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t`` scaled so that its L2 norm (over ``axes``, all by default) is at most ``clip_norm``."""
    values = np.asarray(t)
    axes = None if axes is None else tuple(int(a) for a in np.atleast_1d(axes))
    norm = np.sqrt(np.sum(np.square(values), axis=axes, keepdims=True))
    return tensor((values * clip_norm / np.maximum(norm, clip_norm)).astype(values.dtype))
