"""Losses with Keras' names, formulas and reduction (the mean over the batch of per-sample losses).

As in TensorFlow's Keras, a cross-entropy on probabilities that come straight out of a softmax
(or sigmoid) is computed from the logits underneath, which is exact and numerically stable.

Example:

>>> softmax = keras.Sequential([keras.layers.Softmax(input_shape=(2,))])
>>> probabilities = softmax(np.log(np.array([[0.9, 0.1], [0.2, 0.8]], np.float32)))
>>> labels = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
>>> round(float(keras.losses.CategoricalCrossentropy()(labels, probabilities)), 4)
0.1643
"""

import numpy as np

from ..autograd import Tensor, ops
from .engine import sample_weights

_CHOICES = (
    "categorical_crossentropy",
    "sparse_categorical_crossentropy",
    "binary_crossentropy",
    "mean_squared_error",
    "mse",
    "mean_absolute_error",
    "mae",
    "mean_absolute_percentage_error",
    "mape",
    "mean_squared_logarithmic_error",
    "msle",
    "huber",
    "log_cosh",
    "poisson",
    "kl_divergence",
    "kld",
    "hinge",
    "squared_hinge",
    "categorical_hinge",
    "cosine_similarity",
)


def _labels_as_output(y_true, y_pred: Tensor):
    """Labels in the shape and dtype of the model's output (for the losses with ``labels_take_output_shape``)."""
    return y_true.reshape(y_pred.shape).astype(y_pred.dtype, copy=False)


def _labels_against_output(y_true, y_pred: Tensor):
    """Labels for a loss computed element by element against the output (MSE, MAE): reshaped to the output when
    they hold as many values per sample, else as they are, for the loss to broadcast them against the output as
    Keras does (labels (n, 64) against an output (n, 1): every label against the sample's one prediction)."""
    if y_true.size == int(np.prod(y_pred.shape)):
        return _labels_as_output(y_true, y_pred)
    return y_true.astype(y_pred.dtype, copy=False)


def _broadcast(y_shape, output_shape) -> bool:
    """Whether labels of ``y_shape`` broadcast against an output of ``output_shape`` (same rank, each axis equal
    or 1 in one of them), as Keras' element-wise losses take them."""
    return len(y_shape) == len(output_shape) and all(
        a == b or a == 1 or b in (1, None) for a, b in zip(y_shape[1:], output_shape[1:])
    )


def _logits_under(y_pred: Tensor, function):
    node = y_pred.node
    if node is not None and node.function is function:
        return node.inputs[0]
    return None


class Loss:
    """Callable ``loss(y_true, y_pred)`` -> scalar Tensor: the mean over the batch of ``per_sample``."""

    name = "loss"
    labels_take_output_shape = False
    """True where labels are reshaped to the model's output (binary cross-entropy, MSE, MAE): then, as in Keras,
    any labels with as many values per sample fit, (n,) for an output of (n, 1) for example."""
    labels_broadcast = False
    """True where labels of the output's rank may also broadcast against it, as Keras' MSE and MAE take them."""

    def __init__(self, name=None, reduction="sum_over_batch_size"):
        if reduction not in ("sum_over_batch_size", "auto", "sum", "none"):
            raise ValueError(f"{type(self).__name__}: unknown reduction {reduction!r}")
        self.name = name or self.name
        self.reduction = reduction

    def __call__(self, y_true, y_pred, sample_weight=None):
        """``sample_weight`` (one per sample) scales each sample's loss; the mean still divides by
        the batch size, as Keras' ``sum_over_batch_size`` does."""
        per_sample = self.per_sample(np.asarray(y_true), y_pred)
        if sample_weight is not None:
            weights = sample_weights.aligned(sample_weight, per_sample.ndim).astype(per_sample.dtype)
            weights = sample_weights.broadcast(
                weights, per_sample.shape, sample_weight, f"the per-sample losses ({self.name})"
            )
            per_sample = ops.mul(per_sample, Tensor(weights))
        if self.reduction == "none":
            return per_sample
        if self.reduction == "sum":
            return ops.reduce_sum(per_sample)
        return ops.reduce_mean(per_sample)

    def per_sample(self, y_true, y_pred):
        raise NotImplementedError

    def check_labels(self, y_shape, output_shape) -> None:
        """Fail before training when labels cannot fit this loss; say what to change."""
        fits = (
            int(np.prod(y_shape[1:])) == int(np.prod(output_shape[1:]))
            if self.labels_take_output_shape
            else tuple(y_shape[1:]) == tuple(output_shape[1:])
        ) or (self.labels_broadcast and _broadcast(tuple(y_shape), tuple(output_shape)))
        if not fits:
            raise ValueError(
                f"{self.name}: labels of shape {tuple(y_shape)} do not match the model's output "
                f"shape {tuple(output_shape)}; the labels need shape (n,) + {tuple(output_shape[1:])}"
                + self.hint(output_shape)
            )

    def hint(self, output_shape) -> str:
        return ""

    def label_shape(self, output_shape) -> tuple:
        """The shape of the labels this loss takes for an output of ``output_shape`` (sizing a model,
        ``ipu.utils.estimate``, makes labels of it)."""
        return tuple(output_shape)


class _CrossEntropy(Loss):
    """A cross-entropy of probabilities, or of logits with ``from_logits=True`` (as in Keras)."""

    def __init__(self, from_logits=False, **kwargs):
        super().__init__(**kwargs)
        self.from_logits = from_logits


def _smoothed(y_true, label_smoothing, classes):
    """Keras' label smoothing: each label moved ``label_smoothing`` of the way to 1 / ``classes`` (the
    uniform distribution; 1/2 for a binary label)."""
    return y_true * (1 - label_smoothing) + label_smoothing / classes if label_smoothing else y_true


class CategoricalCrossentropy(_CrossEntropy):
    name = "categorical_crossentropy"

    def __init__(self, from_logits=False, label_smoothing=0.0, **kwargs):
        super().__init__(from_logits=from_logits, **kwargs)
        self.label_smoothing = float(label_smoothing)

    def per_sample(self, y_true, y_pred):
        y_true = _smoothed(y_true.astype(y_pred.dtype, copy=False), self.label_smoothing, y_true.shape[-1])
        logits = y_pred if self.from_logits else _logits_under(y_pred, ops.SoftmaxOp)
        if logits is not None:
            return ops.softmax_cross_entropy(logits, y_true)
        return ops.categorical_crossentropy_probs(y_pred, y_true)

    def hint(self, output_shape):
        return (
            f". For integer class labels use keras.utils.to_categorical(y, {output_shape[-1]}) "
            f"or loss='sparse_categorical_crossentropy'"
        )


class SparseCategoricalCrossentropy(_CrossEntropy):
    name = "sparse_categorical_crossentropy"

    def per_sample(self, y_true, y_pred):
        labels = y_true.reshape(y_pred.shape[:-1]).astype(np.int64)
        logits = y_pred if self.from_logits else _logits_under(y_pred, ops.SoftmaxOp)
        if logits is not None:
            return ops.sparse_softmax_cross_entropy(logits, labels)
        return ops.sparse_categorical_crossentropy_probs(y_pred, labels)

    def label_shape(self, output_shape) -> tuple:
        return tuple(output_shape[:-1])  # one class index per sample

    def check_labels(self, y_shape, output_shape):
        want = tuple(output_shape[1:-1])
        if tuple(y_shape[1:]) not in (want, want + (1,)):
            raise ValueError(
                f"{self.name}: expects integer class labels of shape (n,) (one per sample), "
                f"got labels of shape {tuple(y_shape)} for a model output of shape {tuple(output_shape)}. "
                "For one-hot labels use loss='categorical_crossentropy'"
            )

    def check_values(self, y, output_shape):
        classes = output_shape[-1]
        y = np.asarray(y)
        if y.size and (y.dtype.kind == "f" and not np.all(y == np.round(y)) or y.min() < 0 or y.max() >= classes):
            raise ValueError(
                f"{self.name}: labels must be integers in [0, {classes}), got values from {y.min()} to {y.max()}"
            )


class BinaryCrossentropy(_CrossEntropy):
    name = "binary_crossentropy"
    labels_take_output_shape = True

    def __init__(self, from_logits=False, label_smoothing=0.0, **kwargs):
        super().__init__(from_logits=from_logits, **kwargs)
        self.label_smoothing = float(label_smoothing)

    def per_sample(self, y_true, y_pred):
        y_true = _smoothed(_labels_as_output(y_true, y_pred), self.label_smoothing, 2)
        logits = y_pred if self.from_logits else _logits_under(y_pred, ops.SigmoidOp)
        if logits is not None:
            return ops.sigmoid_binary_crossentropy(logits, y_true)
        return ops.binary_crossentropy_probs(y_pred, y_true)


class MeanSquaredError(Loss):
    name = "mean_squared_error"
    labels_take_output_shape = True
    labels_broadcast = True

    def per_sample(self, y_true, y_pred):
        diff = ops.sub(y_pred, Tensor(_labels_against_output(y_true, y_pred)))
        return ops.reduce_mean(ops.mul(diff, diff), axis=-1)


class MeanAbsoluteError(MeanSquaredError):
    name = "mean_absolute_error"

    def per_sample(self, y_true, y_pred):
        diff = ops.sub(y_pred, Tensor(_labels_against_output(y_true, y_pred)))
        return ops.reduce_mean(ops.absolute(diff), axis=-1)


class _OfOp(Loss):
    """A loss computed by one op of ``autograd.ops.elementwise_losses`` (its function in ``ops``) on the predictions
    and the labels (reshaped to the predictions), with the keyword arguments ``options`` names."""

    labels_take_output_shape = True
    op = None
    options = ()

    def per_sample(self, y_true, y_pred):
        kwargs = {name: getattr(self, name) for name in self.options}
        return self.op(y_pred, _labels_as_output(y_true, y_pred), **kwargs)


class MeanAbsolutePercentageError(_OfOp):
    name, op = "mean_absolute_percentage_error", staticmethod(ops.mean_absolute_percentage_error)


class MeanSquaredLogarithmicError(_OfOp):
    name, op = "mean_squared_logarithmic_error", staticmethod(ops.mean_squared_logarithmic_error)


class Huber(_OfOp):
    """Squared error for errors up to ``delta``, absolute error beyond: less swayed by outliers than MSE."""

    name, op, options = "huber_loss", staticmethod(ops.huber), ("delta",)

    def __init__(self, delta=1.0, **kwargs):
        super().__init__(**kwargs)
        self.delta = float(delta)


class LogCosh(_OfOp):
    name, op = "log_cosh", staticmethod(ops.log_cosh)


class Poisson(_OfOp):
    name, op = "poisson", staticmethod(ops.poisson)


class KLDivergence(_OfOp):
    name, op = "kl_divergence", staticmethod(ops.kl_divergence)


class Hinge(_OfOp):
    name, op = "hinge", staticmethod(ops.hinge)


class SquaredHinge(_OfOp):
    name, op = "squared_hinge", staticmethod(ops.squared_hinge)


class CategoricalHinge(_OfOp):
    name, op = "categorical_hinge", staticmethod(ops.categorical_hinge)


class CosineSimilarity(_OfOp):
    """Minus the cosine of the angle between labels and predictions along ``axis``: -1 when they point the
    same way, so minimising it aligns them."""

    name, op, options = "cosine_similarity", staticmethod(ops.cosine_similarity), ("axis",)

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """Each sample's cross-entropy between one-hot ``y_true`` and the probabilities (or logits) ``y_pred``, not
    reduced: a custom loop takes the mean itself (``tf.reduce_mean``), as Graphcore's TF2 examples do.

    Example:

    >>> softmax = keras.Sequential([keras.layers.Softmax(input_shape=(2,))])
    >>> probabilities = softmax(np.log(np.array([[0.9, 0.1], [0.2, 0.8]], np.float32)))
    >>> labels = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    >>> np.round(np.asarray(keras.losses.categorical_crossentropy(labels, probabilities)), 4)
    array([0.1054, 0.2231], dtype=float32)
    """
    loss = CategoricalCrossentropy(from_logits=from_logits, label_smoothing=label_smoothing)
    return loss.per_sample(np.asarray(y_true), y_pred)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    return SparseCategoricalCrossentropy(from_logits=from_logits).per_sample(np.asarray(y_true), y_pred)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    loss = BinaryCrossentropy(from_logits=from_logits, label_smoothing=label_smoothing)
    return loss.per_sample(np.asarray(y_true), y_pred)


def mean_squared_error(y_true, y_pred):
    return MeanSquaredError().per_sample(np.asarray(y_true), y_pred)


def mean_absolute_error(y_true, y_pred):
    return MeanAbsoluteError().per_sample(np.asarray(y_true), y_pred)


def _function_of(cls, name):
    """Keras' loss function ``name``: the per-sample values of ``cls`` (one per sample, not reduced)."""

    def function(y_true, y_pred):
        return cls().per_sample(np.asarray(y_true), y_pred)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"The per-sample values of keras.losses.{cls.__name__}."
    return function


mean_absolute_percentage_error = _function_of(MeanAbsolutePercentageError, "mean_absolute_percentage_error")
mean_squared_logarithmic_error = _function_of(MeanSquaredLogarithmicError, "mean_squared_logarithmic_error")
log_cosh = _function_of(LogCosh, "log_cosh")
poisson = _function_of(Poisson, "poisson")
kl_divergence = _function_of(KLDivergence, "kl_divergence")
hinge = _function_of(Hinge, "hinge")
squared_hinge = _function_of(SquaredHinge, "squared_hinge")
categorical_hinge = _function_of(CategoricalHinge, "categorical_hinge")


def huber(y_true, y_pred, delta=1.0):
    return Huber(delta).per_sample(np.asarray(y_true), y_pred)


def cosine_similarity(y_true, y_pred, axis=-1):
    return CosineSimilarity(axis).per_sample(np.asarray(y_true), y_pred)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh
huber_loss = huber

_BY_FUNCTION = {
    categorical_crossentropy: CategoricalCrossentropy,
    sparse_categorical_crossentropy: SparseCategoricalCrossentropy,
    binary_crossentropy: BinaryCrossentropy,
    mean_squared_error: MeanSquaredError,
    mean_absolute_error: MeanAbsoluteError,
    mean_absolute_percentage_error: MeanAbsolutePercentageError,
    mean_squared_logarithmic_error: MeanSquaredLogarithmicError,
    huber: Huber,
    log_cosh: LogCosh,
    poisson: Poisson,
    kl_divergence: KLDivergence,
    hinge: Hinge,
    squared_hinge: SquaredHinge,
    categorical_hinge: CategoricalHinge,
    cosine_similarity: CosineSimilarity,
}
_BY_NAME = {
    **{function.__name__: cls for function, cls in _BY_FUNCTION.items()},
    "mse": MeanSquaredError,
    "mae": MeanAbsoluteError,
    "mape": MeanAbsolutePercentageError,
    "msle": MeanSquaredLogarithmicError,
    "kld": KLDivergence,
    "kullback_leibler_divergence": KLDivergence,
    "logcosh": LogCosh,
    "huber_loss": Huber,
}


def get(identifier) -> Loss:
    """A Loss object from a name, a Keras loss function, or a Loss; clear error otherwise."""
    if isinstance(identifier, Loss):
        return identifier
    if identifier in _BY_FUNCTION:
        return _BY_FUNCTION[identifier]()
    by_class_name = {cls.__name__: cls for cls in _BY_FUNCTION.values()}  # Keras takes the class names too
    if identifier in by_class_name:
        return by_class_name[identifier]()
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        loss = _BY_NAME[identifier.lower()]()
        loss.name = identifier.lower()
        return loss
    raise ValueError(
        f"Unknown loss function: {identifier!r}. Choose one of {', '.join(_CHOICES)}, "
        "or pass a keras.losses object such as keras.losses.CategoricalCrossentropy(from_logits=True)"
    )
