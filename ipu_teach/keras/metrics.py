"""Metrics: running means over an epoch, as Keras reports them (weighted by samples seen, and by
``sample_weight`` when given)."""

import numpy as np

from ..autograd import Tensor, no_grad
from . import losses
from .engine import sample_weights


def weighted_total_and_count(values, sample_weight):
    """The sum of ``values`` times their weights, and the sum of the weights: Keras' ``Reduce`` with
    ``WEIGHTED_MEAN`` (keras/metrics/base_metric.py). The weights are lined up with the values
    (``sample_weights.aligned``), then broadcast to them, or else the values are averaged over their
    extra trailing axes."""
    values = np.asarray(values, dtype=np.float64)
    if sample_weight is None:
        return float(values.sum()), float(values.size)
    weights = sample_weights.aligned(sample_weight, values.ndim).astype(np.float64)
    try:
        weights = np.broadcast_to(weights, values.shape)
    except ValueError:
        values = values.mean(axis=tuple(range(weights.ndim, values.ndim)))
        weights = sample_weights.broadcast(weights, values.shape, sample_weight, "metric values")
    return float((values * weights).sum()), float(weights.sum())


class MetricValue(float):
    """A metric's result: a Python float that also answers ``.numpy()``, as the scalar tensor Keras returns
    does (custom training loops print ``metric.result().numpy()``)."""

    def numpy(self) -> np.float32:
        return np.float32(self)


class Metric:
    """Accumulates a weighted total and the total weight; ``result()`` is their ratio. Calling a metric
    updates it and gives its result, as in Keras (``train_loss(loss)``, ``accuracy(labels, predictions)``)."""

    def __call__(self, *args, **kwargs) -> MetricValue:
        self.update_state(*args, **kwargs)
        return self.result()

    def __init__(self, name=None):
        self.name = name or getattr(self, "default_name", type(self).__name__.lower())
        self.reset_state()

    def reset_state(self):
        self.total, self.count = 0.0, 0.0

    def reset_states(self):
        """Keras 2's name for ``reset_state`` (custom training loops call it at each epoch's end)."""
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        """Adds each sample's value, times its ``sample_weight`` (one per sample) when given."""
        self._accumulate(self.per_sample(np.asarray(y_true), np.asarray(y_pred)), sample_weight)

    def _accumulate(self, values, sample_weight) -> None:
        total, count = weighted_total_and_count(values, sample_weight)
        self.total += total
        self.count += count

    def per_sample(self, y_true, y_pred):
        raise NotImplementedError

    def result(self) -> MetricValue:
        return MetricValue(self.total / self.count if self.count else 0.0)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name} result={self.result():.4f}>"


class Mean(Metric):
    """Mean of the values given, weighted (``sample_weight``: one per value, or one for all, e.g. the
    batch size for a batch's loss)."""

    def update_state(self, values, sample_weight=None):
        self._accumulate(values, sample_weight)


def categorical_accuracy(y_true, y_pred):
    return (np.argmax(y_true, axis=-1) == np.argmax(y_pred, axis=-1)).astype(np.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    labels = y_true.reshape(y_pred.shape[:-1])
    return (labels == np.argmax(y_pred, axis=-1)).astype(np.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    return (y_true.reshape(y_pred.shape) == (y_pred > threshold)).astype(np.float32).mean(axis=-1)


def accuracy(y_true, y_pred):
    return (y_true.reshape(y_pred.shape) == y_pred).astype(np.float32)


def mean_squared_error(y_true, y_pred):
    return ((y_pred - y_true.reshape(y_pred.shape)) ** 2).mean(axis=-1)


def mean_absolute_error(y_true, y_pred):
    return np.abs(y_pred - y_true.reshape(y_pred.shape)).mean(axis=-1)


def _loss_metric(loss):
    """A cross-entropy as a metric (Keras accepts a loss's name in ``metrics``): its per-sample values."""

    def metric(y_true, y_pred):
        with no_grad():
            return loss(y_true, Tensor(np.asarray(y_pred, dtype=np.float32))).data

    metric.__name__ = loss.__name__
    return metric


categorical_crossentropy = _loss_metric(losses.categorical_crossentropy)
sparse_categorical_crossentropy = _loss_metric(losses.sparse_categorical_crossentropy)
binary_crossentropy = _loss_metric(losses.binary_crossentropy)


class MeanMetricWrapper(Metric):
    def __init__(self, fn, name=None):
        self.fn = fn
        super().__init__(name or fn.__name__)

    def per_sample(self, y_true, y_pred):
        return self.fn(y_true, y_pred)


def _wrapper(fn, default):
    class _Wrapped(MeanMetricWrapper):
        def __init__(self, name=default):
            super().__init__(fn, name)

    return _Wrapped


CategoricalAccuracy = _wrapper(categorical_accuracy, "categorical_accuracy")
SparseCategoricalAccuracy = _wrapper(sparse_categorical_accuracy, "sparse_categorical_accuracy")
BinaryAccuracy = _wrapper(binary_accuracy, "binary_accuracy")
Accuracy = _wrapper(accuracy, "accuracy")
MeanSquaredError = _wrapper(mean_squared_error, "mean_squared_error")
MeanAbsoluteError = _wrapper(mean_absolute_error, "mean_absolute_error")
for _cls, _name in (
    (CategoricalAccuracy, "CategoricalAccuracy"),
    (SparseCategoricalAccuracy, "SparseCategoricalAccuracy"),
    (BinaryAccuracy, "BinaryAccuracy"),
    (Accuracy, "Accuracy"),
    (MeanSquaredError, "MeanSquaredError"),
    (MeanAbsoluteError, "MeanAbsoluteError"),
):
    _cls.__name__ = _cls.__qualname__ = _name

_BY_NAME = {
    "categorical_accuracy": categorical_accuracy,
    "sparse_categorical_accuracy": sparse_categorical_accuracy,
    "binary_accuracy": binary_accuracy,
    "mse": mean_squared_error,
    "mean_squared_error": mean_squared_error,
    "mae": mean_absolute_error,
    "mean_absolute_error": mean_absolute_error,
    "categorical_crossentropy": categorical_crossentropy,
    "sparse_categorical_crossentropy": sparse_categorical_crossentropy,
    "binary_crossentropy": binary_crossentropy,
}


def resolved_accuracy(y_true, y_pred):
    """TF 2.x Keras' "accuracy", chosen from the shapes of labels and predictions (not from the loss):
    binary for one output unit, sparse when the labels lack the class axis (or it has size 1),
    categorical otherwise."""
    if y_pred.shape[-1] == 1:
        return binary_accuracy(y_true, y_pred)
    if y_true.ndim < y_pred.ndim or y_true.shape[-1] == 1:
        return sparse_categorical_accuracy(y_true, y_pred)
    return categorical_accuracy(y_true, y_pred)


def get(identifier) -> Metric:
    """A Metric from a name (``"accuracy"`` resolved from the data's shapes, as Keras does), a function or a Metric."""
    if isinstance(identifier, Metric):
        return identifier
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    if identifier in ("accuracy", "acc"):
        return MeanMetricWrapper(resolved_accuracy, name=identifier)
    if identifier in _BY_NAME:
        return MeanMetricWrapper(_BY_NAME[identifier], name=identifier)
    raise ValueError(
        f"Unknown metric {identifier!r}. Choose one of "
        f"{', '.join(['accuracy'] + sorted(_BY_NAME))}, or pass a keras.metrics object"
    )
