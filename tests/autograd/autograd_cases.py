"""One small application of every op, for the tests that must hold for all ops (dtype, recording).

Each case is ``(name, fn, inputs, wrt)``: ``name`` the op (with its options in brackets), ``fn`` takes Tensors
and returns a Tensor, through the op's function in ``ops`` (as layers apply ops), ``inputs`` are float32 arrays
(or integer labels), ``wrt`` the inputs that take a gradient.
"""

import importlib
import inspect
import pkgutil

import numpy as np

from ipu_teach.autograd import Function, Tensor, ops

_rng = np.random.default_rng(7)
_x = _rng.normal(size=(2, 5, 5, 3)).astype(np.float32)
_m = _rng.normal(size=(4, 3)).astype(np.float32)
_positive = _rng.uniform(0.1, 1.0, size=(4, 3)).astype(np.float32)
_onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
_labels = np.array([0, 2, 1, 1])
_channel = np.ones(3, dtype=np.float32)


def _unary(name, fn, x=_m):
    return (name, fn, [x], (0,))


def _batch_norm(training):
    def fn(x, gamma, beta):
        return ops.batch_norm(
            x, gamma, beta, Tensor(x.data.mean(axis=(0, 1, 2))), Tensor(x.data.var(axis=(0, 1, 2))), training=training
        )

    return (f"BatchNorm(training={training})", fn, [_x, _channel, _channel * 0.5], (0, 1, 2))


CASES = [
    ("Add", ops.add, [_m, _channel], (0, 1)),
    ("Sub", ops.sub, [_m, _channel], (0, 1)),
    ("Mul", ops.mul, [_m, _channel], (0, 1)),
    ("Div", ops.div, [_m, _positive], (0, 1)),
    _unary("Neg", ops.neg),
    _unary("Abs", ops.absolute),
    _unary("ReLU", ops.relu),
    _unary("Sigmoid", ops.sigmoid),
    _unary("Tanh", ops.tanh),
    _unary("Exp", ops.exp),
    _unary("Log", ops.log, _positive),
    _unary("Softplus", ops.softplus),
    _unary("ELU", ops.elu),
    _unary("Softmax", ops.softmax),
    _unary("GELU", ops.gelu),
    ("GELU(approximate=True)", lambda x: ops.gelu(x, approximate=True), [_m], (0,)),
    ("MatMul", ops.matmul, [_m, _m.T.copy()], (0, 1)),
    ("BatchMatMul", ops.batch_matmul, [_x, _x[:, :, :3, :2].copy()], (0, 1)),
    (
        "BatchMatMul(einsum of attention scores: transposes around it)",
        lambda k, q: ops.einsum("aecd,abcd->acbe", k, q),
        [_rng.normal(size=(2, 3, 2, 4)).astype(np.float32), _rng.normal(size=(2, 5, 2, 4)).astype(np.float32)],
        (0, 1),
    ),
    (
        "Conv2D",
        lambda x, k, b: ops.conv2d(x, k, b, strides=(2, 1), padding="same"),
        [_x, _rng.normal(size=(2, 3, 3, 4)).astype(np.float32), np.zeros(4, dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "Conv2DReLU",
        lambda x, k, b: ops.conv2d_relu(x, k, b, padding="same"),
        [_x, _rng.normal(size=(2, 3, 3, 4)).astype(np.float32), np.array([0.5, -0.5, 0, 1], dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "Conv2DTranspose",
        lambda x, k, b: ops.conv2d_transpose(x, k, b, strides=(2, 1), padding="same"),
        [_x, _rng.normal(size=(3, 2, 4, 3)).astype(np.float32), np.zeros(4, dtype=np.float32)],
        (0, 1, 2),
    ),
    (
        "DepthwiseConv2D",
        lambda x, k: ops.depthwise_conv2d(x, k, padding="same", dilation=(2, 1)),
        [_x, _rng.normal(size=(2, 3, 3, 2)).astype(np.float32)],
        (0, 1),
    ),
    ("MaxPool2D", lambda x: ops.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding="same"), [_x], (0,)),
    ("AvgPool2D", lambda x: ops.avg_pool2d(x, pool_size=(2, 2), padding="same"), [_x], (0,)),
    ("Sum", lambda x: ops.reduce_sum(x, axis=1), [_m], (0,)),
    ("Mean", lambda x: ops.reduce_mean(x, axis=(0, 1)), [_m], (0,)),
    ("Reshape", lambda x: ops.reshape(x, shape=(2, -1)), [_m], (0,)),
    ("CaptureGradient", lambda x: ops.capture_gradient(x, store={}, tag="t"), [_m], (0,)),
    ("SoftmaxCrossEntropy", ops.softmax_cross_entropy, [_m, _onehot], (0,)),
    ("SparseSoftmaxCrossEntropy", ops.sparse_softmax_cross_entropy, [_m, _labels], (0,)),
    ("CategoricalCrossentropyProbs", ops.categorical_crossentropy_probs, [_positive, _onehot], (0,)),
    ("SparseCategoricalCrossentropyProbs", ops.sparse_categorical_crossentropy_probs, [_positive, _labels], (0,)),
    ("SigmoidBinaryCrossentropy", ops.sigmoid_binary_crossentropy, [_m, _onehot], (0,)),
    ("BinaryCrossentropyProbs", ops.binary_crossentropy_probs, [_positive, _onehot], (0,)),
    _batch_norm(True),
    _batch_norm(False),
    ("LayerNorm", lambda x, g, b: ops.layer_norm(x, g, b), [_x, _channel, _channel * 0.5], (0, 1, 2)),
    ("GroupNorm", lambda x, g, b: ops.group_norm(x, g, b, groups=3), [_x, _channel, _channel * 0.5], (0, 1, 2)),
    ("Slice", lambda x: ops.slice_axis(x, axis=1, start=1, stop=3), [_m], (0,)),
    ("StridedSlice", lambda x: ops.strided_slice(x, (slice(None, None, 2), slice(2, None, -1))), [_m], (0,)),
    ("Concatenate", lambda a, b: ops.concatenate([a, b], axis=0), [_m, _positive], (0, 1)),
    ("Transpose", lambda x: ops.transpose(x, perm=(0, 3, 1, 2)), [_x], (0,)),
    ("Reverse", lambda x: ops.reverse(x, axis=1), [_x], (0,)),
    ("Upsample", lambda x: ops.upsample(x, size=(2, 3)), [_x], (0,)),
    ("GeneralReLU", lambda x: ops.general_relu(x, alpha=0.1, max_value=1.0, threshold=0.2), [_m], (0,)),
    ("Pad", lambda x: ops.pad(x, pads=((0, 0), (1, 2), (0, 1), (0, 0))), [_x], (0,)),
    ("Gather", ops.gather, [_m, np.array([[0, 3], [3, 3]])], (0,)),
    ("Cast", lambda x: ops.cast(x, dtype=str(x.dtype)), [_m], (0,)),  # to fp16: tests/autograd/test_precision.py
    # Keras' other losses: predictions (positive, for the logarithms) against one-hot labels
    *[
        (name, fn, [_positive, _onehot], (0,))
        for name, fn in (
            ("MeanAbsolutePercentageError", ops.mean_absolute_percentage_error),
            ("MeanSquaredLogarithmicError", ops.mean_squared_logarithmic_error),
            ("Huber", ops.huber),
            ("LogCosh", ops.log_cosh),
            ("Poisson", ops.poisson),
            ("KLDivergence", ops.kl_divergence),
            ("Hinge", ops.hinge),
            ("SquaredHinge", ops.squared_hinge),
            ("CategoricalHinge", ops.categorical_hinge),
            ("CosineSimilarity", ops.cosine_similarity),
        )
    ],
]

CASE_IDS = [case[0] for case in CASES]


def every_op() -> dict:
    """The Functions defined in the modules of ``autograd/ops`` by the name they are recorded under (an op is one
    file there, listed in ``ops/__init__`` or not), without the private bases and the two of ``pointwise`` that ops
    derive from."""
    found = {}
    for module_info in pkgutil.iter_modules(ops.__path__):
        module = importlib.import_module(f"{ops.__name__}.{module_info.name}")
        found |= {
            value.op_name: value
            for name, value in inspect.getmembers(module, inspect.isclass)
            if issubclass(value, Function)
            and value.__module__ == module.__name__
            and not name.startswith("_")
            and module_info.name != "pointwise"
        }
    return found
