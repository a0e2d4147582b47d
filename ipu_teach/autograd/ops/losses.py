"""Per-sample losses. The softmax and sigmoid ones take logits, which is exact and stable;
Keras does the same when its output layer is a softmax or sigmoid (see ``keras.losses``)."""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like, result_dtype
from . import portable

EPSILON = 1e-7  # keras.backend.epsilon()


class _PerSampleLoss(Function):
    @classmethod
    def infer(cls, ctx, predictions, labels):
        """One value per sample; dense labels take part in the arithmetic (their dtype promotes), indices do not."""
        dtype = predictions.dtype if labels.dtype.kind in "iub" else result_dtype(predictions, labels)
        return like(predictions, predictions.shape[:-1], dtype)

    @classmethod
    def cost(cls, ctx):
        """A log-softmax of each sample's row (reduce max, subtract, exp, reduce add, log) and the label's
        share of it (a product and a row sum): the element-wise ops and reductions TensorFlow's loss lowers to."""
        n = int(np.prod(ctx.input_shapes[0]))
        rows = max(1, int(np.prod(ctx.output_shape)))
        vector = (
            reduction(n, rows)
            + elementwise("add", n, rows)
            + elementwise("exp", n)
            + reduction(n, rows)
            + elementwise("log", rows)
            + elementwise("add", n)
            + reduction(n, rows)
        )
        return OpCost(5 * n, n * ctx.itemsize * 2, rows * ctx.itemsize, rows, (), vector)

    @classmethod
    def backward_cost(cls, ctx):
        """The softmax again (exp, divide by the row sums), minus the labels, times the incoming gradient."""
        n = int(np.prod(ctx.input_shapes[0]))
        rows = max(1, int(np.prod(ctx.output_shape)))
        vector = (
            elementwise("exp", n) + elementwise("divide", n, rows) + elementwise("add", n) + elementwise("add", n, rows)
        )
        return OpCost(5 * n, n * ctx.itemsize * 2, n * ctx.itemsize, rows, (), vector)


def _softmax(logits):
    e = portable.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - portable.log(portable.exp(shifted).sum(axis=-1, keepdims=True))


class SoftmaxCrossEntropyOp(_PerSampleLoss):
    """-sum(y * log softmax(logits)) over the last axis; y may be one-hot or soft labels.

    The gradient is TensorFlow's (``softmax_cross_entropy_with_logits``' kernel): softmax - y. It is the
    derivative of the value for labels that sum to 1 (one-hot, smoothed), and TensorFlow's gradient,
    which scripts trained with, for labels that do not."""

    @staticmethod
    def forward(ctx, logits, labels):
        ctx.save_for_backward(logits, labels)
        return -(labels * _log_softmax(logits)).sum(axis=-1)

    @staticmethod
    def backward(ctx, grad):
        logits, labels = ctx.saved
        return grad[..., None] * (_softmax(logits) - labels), None


class SparseSoftmaxCrossEntropyOp(_PerSampleLoss):
    """-log softmax(logits)[label] with integer labels."""

    @staticmethod
    def forward(ctx, logits, labels):
        log_p = _log_softmax(logits)
        ctx.save_for_backward(logits, labels)
        return -np.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]

    @staticmethod
    def backward(ctx, grad):
        logits, labels = ctx.saved
        g = _softmax(logits)
        np.put_along_axis(g, labels[..., None], np.take_along_axis(g, labels[..., None], axis=-1) - 1, axis=-1)
        return grad[..., None] * g, None


class CategoricalCrossentropyProbsOp(_PerSampleLoss):
    """Keras' formula for probabilities: normalise, clip to [eps, 1 - eps], -sum(y * log p)."""

    @staticmethod
    def forward(ctx, probs, labels):
        total = probs.sum(axis=-1, keepdims=True)
        q = probs / total
        clipped = np.clip(q, EPSILON, 1 - EPSILON)
        ctx.save_for_backward(q, clipped, total, labels)
        return -(labels * portable.log(clipped)).sum(axis=-1)

    @staticmethod
    def backward(ctx, grad):
        q, clipped, total, labels = ctx.saved
        dq = -labels / clipped * ((q >= EPSILON) & (q <= 1 - EPSILON))
        dp = (dq - (dq * q).sum(axis=-1, keepdims=True)) / total
        return grad[..., None] * dp, None


class SparseCategoricalCrossentropyProbsOp(_PerSampleLoss):
    """Keras' formula for probabilities and integer labels (keras/backend.py
    ``sparse_categorical_crossentropy``): clip to [eps, 1 - eps], take the log, and use the result as
    logits of a softmax cross-entropy: ``-log c[label] + log sum(c)``. Unlike the categorical
    formula it does not normalise first: on values that are not probabilities the two differ."""

    @staticmethod
    def forward(ctx, probs, labels):
        clipped = np.clip(probs, EPSILON, 1 - EPSILON)
        total = clipped.sum(axis=-1, keepdims=True)
        ctx.save_for_backward(probs, clipped, total, labels)
        picked = np.take_along_axis(clipped, labels[..., None], axis=-1)[..., 0]
        return portable.log(total[..., 0]) - portable.log(picked)

    @staticmethod
    def backward(ctx, grad):
        probs, clipped, total, labels = ctx.saved
        d_logits = clipped / total  # the softmax of log(clipped), minus the one-hot label below
        np.put_along_axis(d_logits, labels[..., None], np.take_along_axis(d_logits, labels[..., None], -1) - 1, -1)
        inside = (probs >= EPSILON) & (probs <= 1 - EPSILON)  # clip_by_value passes gradients at its bounds
        return grad[..., None] * d_logits / clipped * inside, None


class SigmoidBinaryCrossentropyOp(_PerSampleLoss):
    """Mean over the last axis of the logistic loss on logits, in its overflow-free form."""

    @staticmethod
    def forward(ctx, logits, labels):
        ctx.save_for_backward(logits, labels)
        loss = np.maximum(logits, 0) - logits * labels + portable.log1p(portable.exp(-np.abs(logits)))
        return loss.mean(axis=-1)

    @staticmethod
    def backward(ctx, grad):
        logits, labels = ctx.saved
        sig = 0.5 * (1 + portable.tanh(0.5 * logits))  # the sigmoid, without overflow
        return grad[..., None] * (sig - labels) / logits.shape[-1], None


class BinaryCrossentropyProbsOp(_PerSampleLoss):
    """Keras' formula for probabilities: clip to [eps, 1 - eps], then -(y log(p + eps) + (1 - y) log(1 - p + eps))."""

    @staticmethod
    def forward(ctx, probs, labels):
        p = np.clip(probs, EPSILON, 1 - EPSILON)
        ctx.save_for_backward(probs, p, labels)
        loss = -(labels * portable.log(p + EPSILON) + (1 - labels) * portable.log(1 - p + EPSILON))
        return loss.mean(axis=-1)

    @staticmethod
    def backward(ctx, grad):
        probs, p, labels = ctx.saved
        inside = (probs >= EPSILON) & (probs <= 1 - EPSILON)
        dp = -(labels / (p + EPSILON) - (1 - labels) / (1 - p + EPSILON)) * inside
        return grad[..., None] * dp / probs.shape[-1], None
