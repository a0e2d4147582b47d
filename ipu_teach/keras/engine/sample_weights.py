"""Sample weights travel with the labels: ``(x, Weighted(y, w))`` is a batch whose samples' losses
are scaled by ``w``. Keeping them with ``y`` lets every executor pass batches on unchanged."""

import numpy as np


class Weighted:
    """Labels ``y`` with one weight per sample."""

    __slots__ = ("y", "sample_weight")

    def __init__(self, y, sample_weight):
        self.y, self.sample_weight = y, sample_weight

    @property
    def shape(self):
        return np.shape(self.y)

    def __len__(self):
        return len(self.sample_weight)


def unpack(y):
    """``(labels, sample_weight or None)``."""
    return (y.y, y.sample_weight) if isinstance(y, Weighted) else (y, None)


def aligned(sample_weight, ndim) -> np.ndarray:
    """Weights lined up with values of ``ndim`` axes, as Keras' ``squeeze_or_expand_dimensions``
    (keras/utils/losses_utils.py) lines them up: with one axis more they lose their last (of size 1), with
    one axis fewer they gain one, so that (n,) and (n, 1) weigh n samples alike and never broadcast to (n, n)."""
    weights = np.asarray(sample_weight)
    if weights.ndim == ndim + 1 and weights.shape[-1] == 1:
        return weights[..., 0]
    if weights.ndim == ndim - 1:
        return weights[..., np.newaxis]
    return weights


def broadcast(weights, shape, sample_weight, weighed) -> np.ndarray:
    """``weights`` broadcast to ``shape``, or a ValueError naming the user's ``sample_weight`` and what it was
    to weigh (``weighed``: e.g. "metric values")."""
    try:
        return np.broadcast_to(weights, shape)
    except ValueError:
        raise ValueError(
            f"sample_weight of shape {np.shape(sample_weight)} cannot weigh {weighed} of shape {tuple(shape)}: "
            "give one weight per sample"
        ) from None


def _count(y) -> int:
    return len(y[0]) if isinstance(y, list) else len(y)


def attach(y, sample_weight=None, class_weight=None):
    """``y`` with the weights of its samples (``sample_weight`` times the weight of each sample's
    class), or plain ``y`` when there are none."""
    if class_weight is not None:
        by_class = class_weights_of(y, class_weight)
        sample_weight = by_class if sample_weight is None else np.asarray(sample_weight, np.float32) * by_class
    if sample_weight is None:
        return y
    sample_weight = np.asarray(sample_weight, dtype=np.float32)
    if sample_weight.shape == (_count(y), 1):  # Keras takes a column of weights too
        sample_weight = sample_weight[:, 0]
    if sample_weight.shape != (_count(y),):
        raise ValueError(
            f"sample_weight must hold one weight per sample, shape ({_count(y)},); got shape {sample_weight.shape}"
        )
    return Weighted(y, sample_weight)


def class_weights_of(y, class_weight) -> np.ndarray:
    """Each sample's class weight; labels are class indices or one-hot rows, and classes that
    ``class_weight`` (a dict {class index: weight}) omits weigh 1."""
    if isinstance(y, list):
        raise ValueError("`class_weight` is only supported for Models with a single output.")
    if not isinstance(class_weight, dict) or not all(isinstance(k, (int, np.integer)) and k >= 0 for k in class_weight):
        raise ValueError(
            f"class_weight must be a dict mapping class indices (integers >= 0) to weights, got {class_weight!r}"
        )
    labels = np.asarray(y)
    classes = labels.argmax(axis=-1) if labels.ndim > 1 and labels.shape[-1] > 1 else labels.reshape(len(labels))
    classes = classes.astype(np.int64)
    table = np.ones(max([*class_weight, int(classes.max(initial=0))]) + 1, dtype=np.float32)
    for k, weight in class_weight.items():
        table[k] = weight
    return table[classes]
