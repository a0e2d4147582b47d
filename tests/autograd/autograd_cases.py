"""One small application of every op, for the tests that must hold for all ops (dtype, recording).

Each case is ``(name, fn, inputs, wrt)``: ``fn`` takes Tensors and returns a Tensor, ``inputs`` are
float32 arrays (or integer labels), ``wrt`` the inputs that take a gradient.
"""

import numpy as np

from ipu_teach.autograd import Tensor, ops
from ipu_teach.autograd.ops import elementwise_losses as losses
from ipu_teach.autograd.ops.capture import CaptureGradient
from ipu_teach.autograd.ops.gelu import GELU

_rng = np.random.default_rng(7)
_x = _rng.normal(size=(2, 5, 5, 3)).astype(np.float32)
_m = _rng.normal(size=(4, 3)).astype(np.float32)
_positive = _rng.uniform(0.1, 1.0, size=(4, 3)).astype(np.float32)
_onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
_labels = np.array([0, 2, 1, 1])
_channel = np.ones(3, dtype=np.float32)


def _unary(op, x=_m):
    return (op.__name__, op.apply, [x], (0,))


def _batch_norm(training):
    def fn(x, gamma, beta):
        return ops.BatchNorm.apply(
            x, gamma, beta, Tensor(x.data.mean(axis=(0, 1, 2))), Tensor(x.data.var(axis=(0, 1, 2))), training=training
        )

    return (f"BatchNorm(training={training})", fn, [_x, _channel, _channel * 0.5], (0, 1, 2))


CASES = [
    ("Add", ops.Add.apply, [_m, _channel], (0, 1)),
    ("Sub", ops.Sub.apply, [_m, _channel], (0, 1)),
    ("Mul", ops.Mul.apply, [_m, _channel], (0, 1)),
    ("Div", ops.Div.apply, [_m, _positive], (0, 1)),
    _unary(ops.Neg),
    _unary(ops.Abs),
    _unary(ops.ReLU),
    _unary(ops.Sigmoid),
    _unary(ops.Tanh),
    _unary(ops.Exp),
    _unary(ops.Log, _positive),
    _unary(ops.Softplus),
    _unary(ops.ELU),
    _unary(ops.Softmax),
    _unary(GELU),
    ("GELU(approximate=True)", lambda x: GELU.apply(x, approximate=True), [_m], (0,)),
    ("MatMul", ops.MatMul.apply, [_m, _m.T.copy()], (0, 1)),
    ("BatchMatMul", ops.BatchMatMul.apply, [_x, _x[:, :, :3, :2].copy()], (0, 1)),
    (
        "BatchMatMul(einsum of attention scores: transposes around it)",
        lambda k, q: ops.einsum("aecd,abcd->acbe", k, q),
        [_rng.normal(size=(2, 3, 2, 4)).astype(np.float32), _rng.normal(size=(2, 5, 2, 4)).astype(np.float32)],
        (0, 1),
    ),
    (
        "Conv2D",
        lambda x, k, b: ops.Conv2D.apply(x, k, b, strides=(2, 1), padding="same"),
        [_x, _rng.normal(size=(2, 3, 3, 4)).astype(np.float32), np.zeros(4, dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "Conv2DReLU",
        lambda x, k, b: ops.Conv2DReLU.apply(x, k, b, padding="same"),
        [_x, _rng.normal(size=(2, 3, 3, 4)).astype(np.float32), np.array([0.5, -0.5, 0, 1], dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "Conv2DTranspose",
        lambda x, k, b: ops.Conv2DTranspose.apply(x, k, b, strides=(2, 1), padding="same"),
        [_x, _rng.normal(size=(3, 2, 4, 3)).astype(np.float32), np.zeros(4, dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "DepthwiseConv2D",
        lambda x, k: ops.DepthwiseConv2D.apply(x, k, padding="same", dilation=(2, 1)),
        [_x, _rng.normal(size=(2, 3, 3, 2)).astype(np.float32)],
        (0, 1),
    ),
    ("MaxPool2D", lambda x: ops.MaxPool2D.apply(x, pool_size=(3, 3), strides=(2, 2), padding="same"), [_x], (0,)),
    ("AvgPool2D", lambda x: ops.AvgPool2D.apply(x, pool_size=(2, 2), padding="same"), [_x], (0,)),
    ("Sum", lambda x: ops.Sum.apply(x, axis=1), [_m], (0,)),
    ("Mean", lambda x: ops.Mean.apply(x, axis=(0, 1)), [_m], (0,)),
    ("Reshape", lambda x: ops.Reshape.apply(x, shape=(2, -1)), [_m], (0,)),
    ("CaptureGradient", lambda x: CaptureGradient.apply(x, store={}, tag="t"), [_m], (0,)),
    ("SoftmaxCrossEntropy", ops.SoftmaxCrossEntropy.apply, [_m, _onehot], (0,)),
    ("SparseSoftmaxCrossEntropy", ops.SparseSoftmaxCrossEntropy.apply, [_m, _labels], (0,)),
    ("CategoricalCrossentropyProbs", ops.CategoricalCrossentropyProbs.apply, [_positive, _onehot], (0,)),
    ("SparseCategoricalCrossentropyProbs", ops.SparseCategoricalCrossentropyProbs.apply, [_positive, _labels], (0,)),
    ("SigmoidBinaryCrossentropy", ops.SigmoidBinaryCrossentropy.apply, [_m, _onehot], (0,)),
    ("BinaryCrossentropyProbs", ops.BinaryCrossentropyProbs.apply, [_positive, _onehot], (0,)),
    _batch_norm(True),
    _batch_norm(False),
    ("LayerNorm", lambda x, g, b: ops.LayerNorm.apply(x, g, b), [_x, _channel, _channel * 0.5], (0, 1, 2)),
    ("Slice", lambda x: ops.Slice.apply(x, axis=1, start=1, stop=3), [_m], (0,)),
    ("StridedSlice", lambda x: ops.strided_slice(x, (slice(None, None, 2), slice(2, None, -1))), [_m], (0,)),
    ("Concatenate", lambda a, b: ops.Concatenate.apply(a, b, axis=0), [_m, _positive], (0, 1)),
    ("Transpose", lambda x: ops.Transpose.apply(x, perm=(0, 3, 1, 2)), [_x], (0,)),
    ("Reverse", lambda x: ops.Reverse.apply(x, axis=1), [_x], (0,)),
    ("Upsample", lambda x: ops.Upsample.apply(x, size=(2, 3)), [_x], (0,)),
    ("GeneralReLU", lambda x: ops.GeneralReLU.apply(x, alpha=0.1, max_value=1.0, threshold=0.2), [_m], (0,)),
    ("Pad", lambda x: ops.Pad.apply(x, pads=((0, 0), (1, 2), (0, 1), (0, 0))), [_x], (0,)),
    ("Gather", ops.Gather.apply, [_m, np.array([[0, 3], [3, 3]])], (0,)),
    ("Cast", lambda x: ops.Cast.apply(x, dtype=str(x.dtype)), [_m], (0,)),  # to fp16: tests/autograd/test_precision.py
    # Keras' other losses: predictions (positive, for the logarithms) against one-hot labels
    *[
        (loss.__name__, loss.apply, [_positive, _onehot], (0,))
        for loss in (
            losses.MeanAbsolutePercentageError,
            losses.MeanSquaredLogarithmicError,
            losses.Huber,
            losses.LogCosh,
            losses.Poisson,
            losses.KLDivergence,
            losses.Hinge,
            losses.SquaredHinge,
            losses.CategoricalHinge,
            losses.CosineSimilarity,
        )
    ],
]

CASE_IDS = [case[0] for case in CASES]
