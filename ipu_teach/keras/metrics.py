"""Metrics: running means over an epoch, as Keras reports them (weighted by samples seen, and by
``sample_weight`` when given).

Example:

>>> accuracy = keras.metrics.SparseCategoricalAccuracy()
>>> accuracy.update_state([1, 0], [[0.2, 0.8], [0.3, 0.7]])
>>> accuracy.update_state([0, 0], [[0.6, 0.4], [0.9, 0.1]])
>>> float(accuracy.result())
0.75
"""

import numpy as np

from ..autograd import Tensor, no_grad
from ..autograd.cost import elementwise, reduction
from . import backend, losses
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


def weighted_mean_work(values: int) -> tuple:
    """The device's work for one step of a weighted mean over ``values`` values (Keras' ``Reduce`` metric
    compiled into the step, keras/metrics/base_metric.py): their sum, added to the total and to the count,
    and the total divided by the count for the step's logs."""
    return reduction(values, 1) + elementwise("add", 2) + elementwise("divide", 1)


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

    def get_config(self) -> dict:
        """Keras' ``Metric.get_config``: what ``compile(metrics=[...])`` keeps of the metric in a model file."""
        return {"name": self.name, "dtype": "float32"}

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

    def device_work(self, y_pred_shape) -> tuple:
        """The vector work of one step of this metric on the IPU, for predictions of ``y_pred_shape`` (the
        micro-batch first). Graphcore's Keras compiles ``update_state`` and ``result()`` (the step's logs, sent
        to the host through the outfeed) into the step: per-sample values (a comparison or a difference over
        every prediction, reduced over the rest of each sample, e.g. an argmax), then their weighted mean."""
        values = int(np.prod(y_pred_shape))
        samples = int(y_pred_shape[0]) if len(y_pred_shape) else 1
        return (
            elementwise("add", values)
            + reduction(values, samples)
            + elementwise("add", samples)
            + (weighted_mean_work(samples))
        )

    def __repr__(self):
        result = np.asarray(self.result())  # one value, or one per threshold (Precision(thresholds=[...]))
        shown = f"{float(result):.4f}" if result.ndim == 0 else np.array2string(result, precision=4)
        return f"<{type(self).__name__} name={self.name} result={shown}>"


class Mean(Metric):
    """Mean of the values given, weighted (``sample_weight``: one per value, or one for all, e.g. the
    batch size for a batch's loss).

    A custom loop's mean loss over its steps:

    Example:

    >>> mean_loss = keras.metrics.Mean()
    >>> for loss in (2.0, 1.0, 0.0):
    ...     mean_loss.update_state(loss)
    >>> float(mean_loss.result())
    1.0
    """

    def update_state(self, values, sample_weight=None):
        self._accumulate(values, sample_weight)

    def device_work(self, values_shape=()) -> tuple:
        """A step's mean of values of ``values_shape`` (a loss: a scalar) on the device (:meth:`Metric.device_work`)."""
        return weighted_mean_work(int(np.prod(values_shape)))


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
mean_absolute_percentage_error = _loss_metric(losses.mean_absolute_percentage_error)
mean_squared_logarithmic_error = _loss_metric(losses.mean_squared_logarithmic_error)
hinge = _loss_metric(losses.hinge)
squared_hinge = _loss_metric(losses.squared_hinge)
categorical_hinge = _loss_metric(losses.categorical_hinge)
kl_divergence = _loss_metric(losses.kl_divergence)
poisson = _loss_metric(losses.poisson)
log_cosh = _loss_metric(losses.log_cosh)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The cosine of the angle between labels and predictions along ``axis`` (the loss's value, negated)."""
    with no_grad():
        return -losses.cosine_similarity(y_true, Tensor(np.asarray(y_pred, dtype=np.float32)), axis).data


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
MeanAbsolutePercentageError = _wrapper(mean_absolute_percentage_error, "mean_absolute_percentage_error")
MeanSquaredLogarithmicError = _wrapper(mean_squared_logarithmic_error, "mean_squared_logarithmic_error")
Hinge = _wrapper(hinge, "hinge")
SquaredHinge = _wrapper(squared_hinge, "squared_hinge")
CategoricalHinge = _wrapper(categorical_hinge, "categorical_hinge")
KLDivergence = _wrapper(kl_divergence, "kullback_leibler_divergence")
Poisson = _wrapper(poisson, "poisson")
LogCoshError = _wrapper(log_cosh, "logcosh")
for _cls, _name in (
    (CategoricalAccuracy, "CategoricalAccuracy"),
    (SparseCategoricalAccuracy, "SparseCategoricalAccuracy"),
    (BinaryAccuracy, "BinaryAccuracy"),
    (Accuracy, "Accuracy"),
    (MeanSquaredError, "MeanSquaredError"),
    (MeanAbsoluteError, "MeanAbsoluteError"),
    (MeanAbsolutePercentageError, "MeanAbsolutePercentageError"),
    (MeanSquaredLogarithmicError, "MeanSquaredLogarithmicError"),
    (Hinge, "Hinge"),
    (SquaredHinge, "SquaredHinge"),
    (CategoricalHinge, "CategoricalHinge"),
    (KLDivergence, "KLDivergence"),
    (Poisson, "Poisson"),
    (LogCoshError, "LogCoshError"),
):
    _cls.__name__ = _cls.__qualname__ = _name
CategoricalAccuracy.__doc__ = """How often the highest prediction is the one-hot label's class, over the samples seen.

    Example:

    >>> accuracy = keras.metrics.CategoricalAccuracy()
    >>> accuracy.update_state([[0, 1], [1, 0], [1, 0]], [[0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    >>> round(float(accuracy.result()), 4)
    0.6667
    """


class CosineSimilarity(MeanMetricWrapper):
    """The mean cosine of the angle between labels and predictions along ``axis``."""

    def __init__(self, name="cosine_similarity", axis=-1):
        self.axis = axis
        super().__init__(lambda y_true, y_pred: cosine_similarity(y_true, y_pred, axis), name)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class RootMeanSquaredError(Mean):
    """The square root of the mean of the squared errors over every value (weighted per sample)."""

    def __init__(self, name="root_mean_squared_error"):
        super().__init__(name)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = np.asarray(y_pred, np.float32)
        error = y_pred - np.asarray(y_true, np.float32).reshape(y_pred.shape)
        self._accumulate(error * error, sample_weight)

    def result(self):
        return MetricValue(np.sqrt(self.total / self.count) if self.count else 0.0)

    def device_work(self, y_pred_shape) -> tuple:
        """Each prediction's error and its square, then their mean (:meth:`Metric.device_work`)."""
        values = int(np.prod(y_pred_shape))
        return elementwise("add", values) * 2 + weighted_mean_work(values)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the labels' class (the argmax of one-hot labels) is among the ``k`` highest predictions."""
    return _in_top_k(y_pred, np.argmax(y_true, axis=-1), k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """1 where the integer label is among the ``k`` highest predictions."""
    y_true = np.asarray(y_true)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    return _in_top_k(y_pred, y_true.astype(np.int64), k)


def _in_top_k(y_pred, targets, k):
    """TensorFlow's ``in_top_k``: the target's prediction is finite and fewer than ``k`` predictions are
    larger (so classes tied at the k-th place all count as in the top k)."""
    y_pred = np.asarray(y_pred, np.float32)
    target = np.take_along_axis(y_pred, targets.reshape(y_pred.shape[:-1] + (1,)), axis=-1)
    in_top_k = ((y_pred > target).sum(axis=-1, keepdims=True) < k) & np.isfinite(target)
    return in_top_k.astype(np.float32)[..., 0]


class TopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the one-hot labels' class is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="top_k_categorical_accuracy"):
        self.k = k
        super().__init__(lambda y_true, y_pred: top_k_categorical_accuracy(y_true, y_pred, k), name)

    def get_config(self):
        return {**super().get_config(), "k": self.k}


class SparseTopKCategoricalAccuracy(MeanMetricWrapper):
    """How often the integer label is among the ``k`` highest predictions."""

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy"):
        self.k = k
        super().__init__(lambda y_true, y_pred: sparse_top_k_categorical_accuracy(y_true, y_pred, k), name)

    def get_config(self):
        return {**super().get_config(), "k": self.k}


NEG_INF = -1e10  # keras/utils/metrics_utils.py: what top_k puts in place of the predictions it leaves out


def _filter_top_k(y_pred, k):
    """The ``k`` largest predictions of each row kept, the others NEG_INF (ties: the first, as ``tf.math.top_k``)."""
    order = np.argsort(-y_pred, axis=-1, kind="stable")[..., :k]
    kept = np.zeros(y_pred.shape, bool)
    np.put_along_axis(kept, order, True, axis=-1)
    return np.where(kept, y_pred, np.float32(NEG_INF))


def _lined_up(y_true, y_pred, sample_weight):
    """Keras' ``squeeze_or_expand_dimensions``: labels or predictions lose a last axis of size 1 the other lacks;
    the weights are lined up with the predictions."""
    if y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        y_pred = y_pred[..., 0]
    elif y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    if y_true.shape != y_pred.shape:
        raise ValueError(f"Shapes {y_pred.shape} and {y_true.shape} are incompatible: give one label per prediction")
    if sample_weight is not None:
        sample_weight = sample_weights.broadcast(
            sample_weights.aligned(sample_weight, y_pred.ndim).astype(np.float32),
            y_pred.shape,
            sample_weight,
            "the predictions",
        )
    return y_true, y_pred, sample_weight


class _ConfusionMatrixMetric(Metric):
    """Counts, for each of its thresholds, the (weighted) true and false positives and negatives, as Keras'
    ``metrics_utils.update_confusion_matrix_variables``: a prediction above the threshold is positive, a
    nonzero label is positive. Keras 2.6 requires predictions in [0, 1]."""

    def reset_state(self):
        shape = (len(self._thresholds),) + ((self._num_labels,) if self._multi_label else ())
        self.true_positives, self.false_positives = np.zeros(shape), np.zeros(shape)
        self.true_negatives, self.false_negatives = np.zeros(shape), np.zeros(shape)

    _multi_label, _num_labels, _top_k, _class_id, _label_weights = False, None, None, None, None
    _counts_kept = 4
    """How many of the four confusion counts the metric keeps (Keras updates only those it has)."""

    def device_work(self, y_pred_shape) -> tuple:
        """Keras' ``update_confusion_matrix_variables`` on the device (keras/utils/metrics_utils.py): every
        prediction compared with every threshold, then for each count kept a logical and with the labels, a
        weighting, a sum over the predictions and an add to the count; then ``result()``'s passes over the
        thresholds (:meth:`_result_work`)."""
        thresholds = len(self._thresholds)
        cells = thresholds * int(np.prod(y_pred_shape))
        per_count = elementwise("add", cells) * 2 + reduction(cells, thresholds) + elementwise("add", thresholds)
        return elementwise("add", cells) + per_count * self._counts_kept + self._result_work(thresholds)

    def _result_work(self, thresholds) -> tuple:
        """``tp / (tp + other)`` at each threshold (precision, recall)."""
        return elementwise("add", thresholds) + elementwise("divide", thresholds)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred, weights = _lined_up(
            np.asarray(y_true, np.float32), self._predictions(np.asarray(y_pred, np.float32)), sample_weight
        )
        for bad, wording in ((y_pred < 0, ">= 0"), (y_pred > 1, "<= 1")):
            if bad.any():
                raise ValueError(
                    f"{type(self).__name__}: predictions must be {wording}, got {y_pred[bad].flat[0]} (Keras 2.6 "
                    "checks this): give probabilities, e.g. from a sigmoid or softmax output"
                    + (", or pass from_logits=True" if hasattr(self, "from_logits") else "")
                )
        if self._top_k is not None:
            y_pred = _filter_top_k(y_pred, self._top_k)
        if self._class_id is not None:
            y_true, y_pred = y_true[..., self._class_id, None], y_pred[..., self._class_id, None]
            weights = None if weights is None else weights[..., self._class_id, None]
        if self._label_weights is not None and not self._multi_label:
            label_weights = np.broadcast_to(self._label_weights, y_pred.shape)
            weights = label_weights if weights is None else weights * label_weights
        if not self._multi_label:
            y_true, y_pred = y_true.reshape(-1), y_pred.reshape(-1)
            weights = None if weights is None else weights.reshape(-1)
        thresholds = np.asarray(self._thresholds, np.float32).reshape((-1,) + (1,) * y_pred.ndim)
        predicted, actual = y_pred[None] > thresholds, (y_true != 0)[None]
        weights = np.ones(y_pred.shape, np.float32) if weights is None else weights
        for name, cells in (
            ("true_positives", actual & predicted),
            ("false_positives", ~actual & predicted),
            ("true_negatives", ~actual & ~predicted),
            ("false_negatives", actual & ~predicted),
        ):
            counts = (cells * weights.astype(np.float64)).sum(axis=1)
            setattr(self, name, getattr(self, name) + counts)

    def _predictions(self, y_pred):
        return y_pred


def _divide_no_nan(numerator, denominator):
    """``numerator / denominator``, 0 where the denominator is 0, in float32 as Keras' metric variables."""
    numerator, denominator = np.float32(numerator), np.float32(denominator)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator == 0, np.float32(0), numerator / denominator).astype(np.float32)


def _thresholds_from(thresholds, default, owner):
    """Keras' ``parse_init_thresholds``: a float or a list, each in [0, 1]; ``default`` when None."""
    if thresholds is None:
        return [default]
    given = list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds]
    invalid = [t for t in given if t is None or not 0 <= t <= 1]
    if invalid:
        raise ValueError(f"{owner}: Threshold values must be in [0, 1]. Received: {invalid}")
    return [float(t) for t in given]


class _PrecisionOrRecall(_ConfusionMatrixMetric):
    _counts_kept = 2  # true positives, and false positives (precision) or false negatives (recall)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None):
        self.init_thresholds, self.top_k, self.class_id = thresholds, top_k, class_id
        self._top_k, self._class_id = top_k, class_id
        self._thresholds = _thresholds_from(thresholds, 0.5 if top_k is None else NEG_INF, type(self).__name__)
        super().__init__(name or backend.unique_name(backend.snake_case(type(self).__name__)))

    @property
    def thresholds(self):
        return list(self._thresholds)

    def result(self):
        """One value, or one per threshold when several were given (as Keras)."""
        values = _divide_no_nan(self.true_positives, self.true_positives + self._other())
        return MetricValue(values[0]) if len(self._thresholds) == 1 else values

    def get_config(self):
        return {"name": self.name, "thresholds": self.init_thresholds, "top_k": self.top_k, "class_id": self.class_id}


class Precision(_PrecisionOrRecall):
    """Of the predictions above the threshold (default 0.5), the share whose label is positive:
    ``tp / (tp + fp)``. ``top_k`` counts only each row's k highest predictions; ``class_id`` one class."""

    def _other(self):
        return self.false_positives


class Recall(_PrecisionOrRecall):
    """Of the positive labels, the share predicted above the threshold (default 0.5): ``tp / (tp + fn)``."""

    def _other(self):
        return self.false_negatives


_CURVES = {"roc": "ROC", "pr": "PR"}
_SUMMATIONS = ("interpolation", "majoring", "minoring")


class AUC(_ConfusionMatrixMetric):
    """The area under the ROC (or precision-recall) curve, from the confusion counts at ``num_thresholds``
    thresholds, summed as Keras sums it (``interpolation``: trapezoids, for PR Davis and Goadrich's
    interpolation; ``minoring`` or ``majoring``: the lower or upper Riemann sum). ``multi_label`` keeps
    one curve per label and averages their areas (weighted by ``label_weights``)."""

    def __init__(
        self,
        num_thresholds=200,
        curve="ROC",
        summation_method="interpolation",
        name=None,
        thresholds=None,
        multi_label=False,
        num_labels=None,
        label_weights=None,
        from_logits=False,
    ):
        if str(curve).lower() not in _CURVES:
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected values are ["PR", "ROC"]')
        if str(summation_method).lower() not in _SUMMATIONS:
            raise ValueError(
                f'Invalid AUC summation method value: "{summation_method}". '
                'Expected values are ["interpolation", "majoring", "minoring"]'
            )
        if thresholds is not None:
            inner = sorted(_thresholds_from(thresholds, None, "AUC"))
            self._init_from_thresholds = True
        else:
            if num_thresholds <= 1:
                raise ValueError(
                    f"Argument `num_thresholds` must be an integer > 1. Received: num_thresholds={num_thresholds}"
                )
            inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self._init_from_thresholds = False
        if num_labels and not multi_label:
            raise ValueError("`num_labels` is needed only when `multi_label` is True.")
        if label_weights is not None and np.any(np.asarray(label_weights) < 0):
            raise ValueError("All values of `label_weights` must be non-negative.")
        self.num_thresholds = len(inner) + 2
        self._thresholds = [0.0 - backend.epsilon()] + inner + [1.0 + backend.epsilon()]
        self.curve, self.summation_method = _CURVES[str(curve).lower()], str(summation_method).lower()
        self.multi_label, self.num_labels, self.from_logits = bool(multi_label), num_labels, bool(from_logits)
        self.label_weights = None if label_weights is None else np.asarray(label_weights, np.float32)
        self._multi_label, self._num_labels, self._label_weights = self.multi_label, num_labels, self.label_weights
        super().__init__(name or backend.unique_name("auc"))

    @property
    def thresholds(self):
        return list(self._thresholds)

    def reset_state(self):
        if self.multi_label and self._num_labels is None:
            self.true_positives = None  # shaped by the first batch's number of labels
            return
        super().reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = np.asarray(y_pred, np.float32)
        if self.multi_label:
            labels = y_pred.shape[-1] if y_pred.ndim > 1 else 1
            if self._num_labels is None:
                self._num_labels = labels
                super().reset_state()
            if labels != self._num_labels:
                raise ValueError(f"AUC: Number of labels is not consistent: {labels} here, {self._num_labels} before")
        super().update_state(y_true, y_pred, sample_weight)

    def _predictions(self, y_pred):
        return 1 / (1 + np.exp(-y_pred)) if self.from_logits else y_pred

    def _result_work(self, thresholds) -> tuple:
        """The curve's two rates (an add and a divide each), then the Riemann sum's heights (add, multiply),
        widths (subtract, multiply) and total, as Keras' ``AUC.result``."""
        return (
            elementwise("add", thresholds) * 2
            + elementwise("divide", thresholds) * 2
            + (elementwise("add", thresholds) * 4 + reduction(thresholds, 1))
        )

    def result(self):
        if self.true_positives is None:
            return MetricValue(0.0)
        counts = (self.true_positives, self.false_positives, self.true_negatives, self.false_negatives)
        tp, fp, tn, fn = (np.float32(v) for v in counts)
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._averaged(self._interpolated_pr_areas(tp, fp, fn))
        recall = _divide_no_nan(tp, tp + fn)
        x, y = (_divide_no_nan(fp, fp + tn), recall) if self.curve == "ROC" else (recall, _divide_no_nan(tp, tp + fp))
        if self.summation_method == "interpolation":
            heights = (y[:-1] + y[1:]) / np.float32(2)
        else:
            heights = (np.minimum if self.summation_method == "minoring" else np.maximum)(y[:-1], y[1:])
        return self._averaged((x[:-1] - x[1:]) * heights)

    @staticmethod
    def _interpolated_pr_areas(tp, fp, fn):
        """Keras' ``interpolate_pr_auc``: precision varies linearly with the predicted positives between
        thresholds (Davis and Goadrich 2006), integrated in closed form."""
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        slope = _divide_no_nan(dtp, np.maximum(p[:-1] - p[1:], 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _divide_no_nan(p[:-1], np.maximum(p[1:], 0)), np.float32(1))
        return _divide_no_nan(slope * (dtp + intercept * np.log(ratio)), np.maximum(tp[1:] + fn[1:], 0))

    def _averaged(self, terms):
        if not self.multi_label:
            return MetricValue(terms.sum(dtype=np.float32))
        by_label = terms.sum(axis=0, dtype=np.float32)
        if self.label_weights is None:
            return MetricValue(by_label.mean(dtype=np.float32))
        return MetricValue(_divide_no_nan((by_label * self.label_weights).sum(), self.label_weights.sum()))

    def get_config(self):
        config = {
            "name": self.name,
            "num_thresholds": self.num_thresholds,
            "curve": self.curve,
            "summation_method": self.summation_method,
            "multi_label": self.multi_label,
            "num_labels": self.num_labels,
            "label_weights": None if self.label_weights is None else self.label_weights.tolist(),
            "from_logits": self.from_logits,
        }
        if self._init_from_thresholds:
            config["thresholds"] = self._thresholds[1:-1]
        return config


class MeanIoU(Metric):
    """The intersection over union of each class (``tp / (tp + fp + fn)`` in the confusion matrix of class
    ids), averaged over the classes that occur in labels or predictions. Predictions are class ids, as in
    Keras (take the argmax of probabilities first)."""

    def __init__(self, num_classes, name=None):
        self.num_classes = int(num_classes)
        super().__init__(name or backend.unique_name("mean_io_u"))

    def reset_state(self):
        self.total_cm = np.zeros((self.num_classes, self.num_classes))

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = np.asarray(y_true, np.float32).reshape(-1).astype(np.int64)
        y_pred = np.asarray(y_pred, np.float32).reshape(-1).astype(np.int64)
        weights = np.ones(y_true.shape) if sample_weight is None else np.asarray(sample_weight, np.float32).reshape(-1)
        for what, ids in (("labels", y_true), ("predictions", y_pred)):
            if ids.size and (ids.min() < 0 or ids.max() >= self.num_classes):
                raise ValueError(
                    f"MeanIoU: {what} must be class ids in [0, {self.num_classes}), got values from {ids.min()} to "
                    f"{ids.max()}" + (" (take the argmax of probabilities)" if what == "predictions" else "")
                )
        np.add.at(self.total_cm, (y_true, y_pred), np.broadcast_to(weights, y_true.shape))

    def device_work(self, y_pred_shape) -> tuple:
        """Keras' ``confusion_matrix`` of the step (each label and prediction combined into a cell id, counted
        into the classes x classes cells), added to the total; then ``result()``: the rows' and columns' sums,
        each class's union and ratio, and their mean."""
        values, classes = int(np.prod(y_pred_shape)), self.num_classes
        cells = classes * classes
        update = elementwise("add", values) * 2 + reduction(values, cells) + elementwise("add", cells)
        result = reduction(cells, classes) * 2 + elementwise("add", classes) * 2 + elementwise("divide", classes)
        return update + result + reduction(classes, 1) + elementwise("divide", 1)

    def result(self):
        cm = np.float32(self.total_cm)
        true_positives = np.diag(cm)
        denominator = cm.sum(axis=0) + cm.sum(axis=1) - true_positives
        iou = _divide_no_nan(true_positives, denominator)
        return MetricValue(_divide_no_nan(iou.sum(dtype=np.float32), np.float32((denominator != 0).sum())))

    def get_config(self):
        return {"name": self.name, "num_classes": self.num_classes}


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
    "top_k_categorical_accuracy": top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy": sparse_top_k_categorical_accuracy,
    **{f.__name__: f for f in (mean_absolute_percentage_error, mean_squared_logarithmic_error, hinge, poisson)},
    **{f.__name__: f for f in (squared_hinge, categorical_hinge, kl_divergence, log_cosh, cosine_similarity)},
    "mape": mean_absolute_percentage_error,
    "msle": mean_squared_logarithmic_error,
    "kld": kl_divergence,
    "kullback_leibler_divergence": kl_divergence,
    "logcosh": log_cosh,
}
_CLASSES_BY_NAME = {
    cls.__name__: cls
    for cls in (AUC, Precision, Recall, TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, RootMeanSquaredError)
    + (MeanAbsolutePercentageError, MeanSquaredLogarithmicError, Hinge, SquaredHinge, CategoricalHinge)
    + (KLDivergence, Poisson, LogCoshError, CosineSimilarity)
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
    if identifier in _CLASSES_BY_NAME:
        # Keras makes a class named by a string with its default arguments; compile builds it in the training
        # graph, whose names start afresh: "AUC" is logged as auc even beside an AUC() object named auc_1.
        cls = _CLASSES_BY_NAME[identifier]
        return cls(name=backend.snake_case(cls.__name__)) if cls in (AUC, Precision, Recall) else cls()
    raise ValueError(
        f"Unknown metric {identifier!r}. Choose one of "
        f"{', '.join(['accuracy'] + sorted(_BY_NAME) + sorted(_CLASSES_BY_NAME))}, or pass a keras.metrics object"
    )
