"""Keras' other losses (keras/losses.py): a few element-wise operations on predictions and labels, then a
mean (or sum) over the last axis, one value per sample; and two that work on whole rows (categorical hinge,
cosine similarity). Each forward keeps the derivative of its values with respect to the predictions, which
is TensorFlow's gradient of the same formula (where TensorFlow's ``maximum`` passes the gradient to its
first argument on a tie, and ``clip_by_value`` at its bounds, so do these).

Example:

>>> from ipu_teach.autograd import Tensor
>>> HuberOp.apply(Tensor(np.array([[0.5, 3.0]], np.float32)), np.zeros((1, 2), np.float32), delta=1.0).data
array([1.3125], dtype=float32)
"""

import numpy as np

from ..cost import OpCost, elementwise, reduction
from ..function import Function
from ..symbolic import like
from . import portable

EPSILON = 1e-7  # keras.backend.epsilon()


class _ElementwiseLoss(Function):
    """``values(y_pred, y_true)`` element by element, averaged (or summed, ``summed``) over the last axis.

    A subclass gives ``values_and_derivative`` and the popops codelets of its forward and backward passes,
    which are its cost on the IPU: one FLOP per element per pass, plus the reduction over the last axis."""

    summed = False
    forward_passes: tuple = ()
    backward_passes: tuple = ()

    @staticmethod
    def values_and_derivative(y_pred, y_true, **params):
        raise NotImplementedError

    @classmethod
    def infer(cls, ctx, y_pred, y_true, **params):
        return like(y_pred, y_pred.shape[:-1])

    @classmethod
    def forward(cls, ctx, y_pred, y_true, **params):
        y_true = y_true.astype(y_pred.dtype, copy=False)
        values, derivative = cls.values_and_derivative(y_pred, y_true, **params)
        ctx.save_for_backward(derivative if cls.summed else derivative / y_pred.shape[-1])
        return (values.sum(axis=-1) if cls.summed else values.mean(axis=-1)).astype(y_pred.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (derivative,) = ctx.saved
        return (grad[..., None] * derivative).astype(grad.dtype, copy=False), None

    @classmethod
    def _passes_cost(cls, ctx, passes, outputs, reduce_outputs):
        n = int(np.prod(ctx.input_shapes[0]))
        vector = sum((elementwise(codelet, n) for codelet in passes), ())
        if reduce_outputs:
            vector += reduction(n, outputs)
        return OpCost(len(passes) * n, 2 * n * ctx.itemsize, outputs * ctx.itemsize, outputs, (), vector)

    @classmethod
    def cost(cls, ctx):
        return cls._passes_cost(ctx, cls.forward_passes, max(1, int(np.prod(ctx.output_shape))), True)

    @classmethod
    def backward_cost(cls, ctx):
        return cls._passes_cost(ctx, cls.backward_passes, int(np.prod(ctx.input_shapes[0])), False)


class MeanAbsolutePercentageErrorOp(_ElementwiseLoss):
    """``100 * |(t - p) / max(|t|, eps)|``."""

    forward_passes = ("add", "add", "add", "divide", "add")  # t - p, |t|, max, /, |.|
    backward_passes = ("add", "divide", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        scale = np.maximum(np.abs(y_true), y_pred.dtype.type(EPSILON))
        ratio = (y_true - y_pred) / scale
        return 100 * np.abs(ratio), -100 * np.sign(ratio) / scale


class MeanSquaredLogarithmicErrorOp(_ElementwiseLoss):
    """``(log(max(p, eps) + 1) - log(max(t, eps) + 1)) ** 2``."""

    forward_passes = ("add", "add", "log", "add", "add", "log", "add", "add")
    backward_passes = ("add", "divide", "add", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        eps = y_pred.dtype.type(EPSILON)
        shifted = np.maximum(y_pred, eps) + 1
        difference = portable.log(shifted) - portable.log(np.maximum(y_true, eps) + 1)
        return difference * difference, 2 * difference / shifted * (y_pred >= eps)


class HuberOp(_ElementwiseLoss):
    """``e * e / 2`` where ``|e| <= delta``, else ``delta * |e| - delta * delta / 2`` (``e = p - t``)."""

    forward_passes = ("add",) * 6  # -, |.|, <=, square, the linear part, select
    backward_passes = ("add",) * 3

    @staticmethod
    def values_and_derivative(y_pred, y_true, delta=1.0):
        kind = y_pred.dtype.type
        error = y_pred - y_true
        small = np.abs(error) <= kind(delta)
        values = np.where(small, kind(0.5) * error * error, kind(delta) * np.abs(error) - kind(0.5) * kind(delta) ** 2)
        return values, np.where(small, error, kind(delta) * np.sign(error))


class LogCoshOp(_ElementwiseLoss):
    """``log(cosh(e))`` as Keras writes it without overflow: ``e + softplus(-2 e) - log 2``."""

    forward_passes = ("add", "add", "exp", "log", "add", "add")
    backward_passes = ("tanh", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        error = y_pred - y_true
        values = error + portable.softplus(-2 * error) - y_pred.dtype.type(np.log(2.0))
        return values, portable.tanh(error)


class PoissonOp(_ElementwiseLoss):
    """``p - t * log(p + eps)``."""

    forward_passes = ("add", "log", "add", "add")
    backward_passes = ("divide", "add", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        shifted = y_pred + y_pred.dtype.type(EPSILON)
        return y_pred - y_true * portable.log(shifted), 1 - y_true / shifted


class KLDivergenceOp(_ElementwiseLoss):
    """``t * log(t / p)`` with both clipped to [eps, 1], summed over the last axis."""

    summed = True
    forward_passes = ("add", "add", "divide", "log", "add")
    backward_passes = ("divide", "add", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        eps = y_pred.dtype.type(EPSILON)
        t, p = np.clip(y_true, eps, 1), np.clip(y_pred, eps, 1)
        return t * portable.log(t / p), -t / p * ((y_pred >= eps) & (y_pred <= 1))


def hinge_labels(y_true):
    """Keras' ``_maybe_convert_labels``: labels that are all 0 or 1 become -1 or 1; others stay."""
    if np.all((y_true == 0) | (y_true == 1)):
        return 2 * y_true - 1
    return y_true


class HingeOp(_ElementwiseLoss):
    """``max(1 - t * p, 0)`` with labels in {-1, 1} (0/1 labels converted)."""

    forward_passes = ("add", "add", "add")
    backward_passes = ("add", "add")

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        t = hinge_labels(y_true)
        margin = 1 - t * y_pred
        return np.maximum(margin, 0), -t * (margin >= 0)


class SquaredHingeOp(_ElementwiseLoss):
    """``max(1 - t * p, 0) ** 2`` with labels in {-1, 1} (0/1 labels converted)."""

    forward_passes = ("add",) * 4
    backward_passes = ("add",) * 3

    @staticmethod
    def values_and_derivative(y_pred, y_true):
        t = hinge_labels(y_true)
        positive = np.maximum(1 - t * y_pred, 0)
        return positive * positive, -2 * t * positive


class CategoricalHingeOp(_ElementwiseLoss):
    """``max(max((1 - t) * p) - sum(t * p) + 1, 0)`` per sample; the maximum's gradient is shared between ties,
    as TensorFlow's ``reduce_max``'s."""

    forward_passes = ("add",) * 5

    @classmethod
    def forward(cls, ctx, y_pred, y_true):
        t = y_true.astype(y_pred.dtype, copy=False)
        positive = (t * y_pred).sum(axis=-1)
        others = (1 - t) * y_pred
        negative = others.max(axis=-1)
        margin = negative - positive + 1
        ties = others == negative[..., None]
        d_negative = (1 - t) * ties / ties.sum(axis=-1, keepdims=True)
        ctx.save_for_backward((d_negative - t) * (margin >= 0)[..., None])
        return np.maximum(margin, 0).astype(y_pred.dtype, copy=False)

    backward_passes = ("add",)


class CosineSimilarityOp(Function):
    """``-sum(l2_normalize(t) * l2_normalize(p))`` over ``axis``, as Keras (``l2_normalize`` divides by
    ``sqrt(max(sum(x * x), 1e-12))``); a value per sample from -1 (same direction) to 1."""

    @classmethod
    def infer(cls, ctx, y_pred, y_true, axis=-1):
        return like(y_pred, y_pred.shape[: axis % y_pred.ndim] + y_pred.shape[axis % y_pred.ndim + 1 :])

    @staticmethod
    def forward(ctx, y_pred, y_true, axis=-1):
        t = y_true.astype(y_pred.dtype, copy=False)
        kind = y_pred.dtype.type
        t = t / np.sqrt(np.maximum((t * t).sum(axis=axis, keepdims=True), kind(1e-12)))
        squares = (y_pred * y_pred).sum(axis=axis, keepdims=True)
        inverse_norm = 1 / np.sqrt(np.maximum(squares, kind(1e-12)))
        dot = (t * y_pred).sum(axis=axis, keepdims=True)
        ctx.save_for_backward(-t * inverse_norm + dot * inverse_norm**3 * y_pred * (squares >= kind(1e-12)), axis)
        return -(dot * inverse_norm).squeeze(axis=axis)

    @staticmethod
    def backward(ctx, grad):
        derivative, axis = ctx.saved
        return np.expand_dims(grad, axis) * derivative, None

    @classmethod
    def cost(cls, ctx):
        """Two squares and sums, two normalisations, a product and a sum."""
        n, rows = int(np.prod(ctx.input_shapes[0])), max(1, int(np.prod(ctx.output_shape)))
        vector = sum((elementwise("add", n) for _ in range(5)), ()) + reduction(n, rows) * 3
        return OpCost(8 * n, 2 * n * ctx.itemsize, rows * ctx.itemsize, rows, (), vector)

    @classmethod
    def backward_cost(cls, ctx):
        n = int(np.prod(ctx.input_shapes[0]))
        return OpCost(4 * n, n * ctx.itemsize, n * ctx.itemsize, n, (), elementwise("add", n) * 4)
