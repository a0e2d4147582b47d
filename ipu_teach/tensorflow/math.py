"""``tf.math`` (also at the top level: ``tf.divide``, ``tf.reduce_mean``...): elementwise functions and
reductions on numpy, with TensorFlow's argument names (``axis``, ``keepdims``). Given an autograd Tensor (a
model's output, a loss), those with an autograd op apply it, so that ``tf.GradientTape`` differentiates them
(:mod:`.differentiable`)."""

import numpy as np

from ..autograd import ops
from .differentiable import carries_gradient as _carries_gradient
from .differentiable import needs_gradient as _needs_gradient
from .differentiable import not_differentiable as _not_differentiable
from .tensor import tensor


def _operand(value):
    """Python numbers stay Python numbers, so numpy gives them the other operand's dtype, as TensorFlow does
    (``tf.divide(float32_tensor, 255.0)`` is float32); everything else becomes an array."""
    return value if isinstance(value, (bool, int, float)) else np.asarray(value)


def _elementwise(function, doc, op=None):
    def apply(x, *args, name=None):
        if op is not None and _carries_gradient(x, *args):
            return op(x, *args)
        if _needs_gradient(x, *args):
            raise _not_differentiable(apply.__name__)
        return tensor(function(_operand(x), *map(_operand, args)))

    apply.__doc__ = doc
    return apply


def _reduction(function, doc, op=None):
    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        axis = tuple(int(a) for a in np.atleast_1d(axis)) if axis is not None else None
        if op is not None and _carries_gradient(input_tensor):
            return op(input_tensor, axis, keepdims)
        if _needs_gradient(input_tensor):
            raise _not_differentiable(reduce.__name__)
        return tensor(function(np.asarray(input_tensor), axis=axis, keepdims=keepdims))

    reduce.__doc__ = doc
    return reduce


add = _elementwise(np.add, "x + y", ops.add)
subtract = _elementwise(np.subtract, "x - y", ops.sub)
multiply = _elementwise(np.multiply, "x * y", ops.mul)
divide = _elementwise(np.true_divide, "x / y (integers give floats, as in Python 3 and TensorFlow)", ops.div)
truediv = divide
floordiv = _elementwise(np.floor_divide, "x // y")
mod = _elementwise(np.mod, "x % y")
pow = _elementwise(np.power, "x ** y")  # noqa: A001 (tf.math.pow)
maximum = _elementwise(np.maximum, "the larger of x and y, elementwise")
minimum = _elementwise(np.minimum, "the smaller of x and y, elementwise")
abs = _elementwise(np.abs, "|x|", ops.absolute)  # noqa: A001 (tf.math.abs)
negative = _elementwise(np.negative, "-x", ops.neg)
square = _elementwise(np.square, "x ** 2", lambda x: ops.mul(x, x))
sqrt = _elementwise(np.sqrt, "the square root of x")
rsqrt = _elementwise(lambda x: 1 / np.sqrt(x), "1 / sqrt(x)")
exp = _elementwise(np.exp, "e ** x", ops.exp)
log = _elementwise(np.log, "the natural logarithm of x", ops.log)
sign = _elementwise(np.sign, "-1, 0 or 1")
floor = _elementwise(np.floor, "x rounded down")
ceil = _elementwise(np.ceil, "x rounded up")
round = _elementwise(np.rint, "x rounded half to even, as TensorFlow rounds")  # noqa: A001 (tf.math.round)
tanh = _elementwise(np.tanh, "the hyperbolic tangent of x", ops.tanh)
sigmoid = _elementwise(lambda x: 1 / (1 + np.exp(-x)), "1 / (1 + e ** -x)", ops.sigmoid)
equal = _elementwise(np.equal, "x == y")
not_equal = _elementwise(np.not_equal, "x != y")
greater = _elementwise(np.greater, "x > y")
greater_equal = _elementwise(np.greater_equal, "x >= y")
less = _elementwise(np.less, "x < y")
less_equal = _elementwise(np.less_equal, "x <= y")
logical_and = _elementwise(np.logical_and, "x and y")
logical_or = _elementwise(np.logical_or, "x or y")
logical_not = _elementwise(np.logical_not, "not x")
is_nan = _elementwise(np.isnan, "x is NaN")
is_finite = _elementwise(np.isfinite, "x is finite")

reduce_sum = _reduction(np.sum, "the sum over ``axis`` (all axes when None)", ops.reduce_sum)
reduce_mean = _reduction(
    np.mean,
    """The mean over ``axis`` (all axes when None); differentiable, as a custom loop's loss needs.

    Example:

    >>> import ipu_teach.tensorflow as tf
    >>> values = tf.constant([[1.0, 2.0], [3.0, 5.0]])
    >>> tf.reduce_mean(values), tf.reduce_mean(values, axis=1)
    (EagerTensor(2.75, dtype=float32), EagerTensor([1.5, 4. ], dtype=float32))
    """,
    ops.reduce_mean,
)
reduce_max = _reduction(np.max, "the maximum over ``axis`` (all axes when None)")
reduce_min = _reduction(np.min, "the minimum over ``axis`` (all axes when None)")
reduce_prod = _reduction(np.prod, "the product over ``axis`` (all axes when None)")
reduce_any = _reduction(np.any, "whether any value over ``axis`` is true")
reduce_all = _reduction(np.all, "whether every value over ``axis`` is true")

for _name, _function in list(globals().items()):  # each function is named as tf names it, for its messages
    if getattr(_function, "__name__", None) in ("apply", "reduce"):
        _function.__name__ = _function.__qualname__ = _name


def argmax(input, axis=None, output_type="int64", name=None):  # noqa: A002
    """Index of the largest value along ``axis`` (TensorFlow's default is axis 0, not the flattened array)."""
    return tensor(np.argmax(input, axis=0 if axis is None else axis), output_type)


def argmin(input, axis=None, output_type="int64", name=None):  # noqa: A002
    return tensor(np.argmin(input, axis=0 if axis is None else axis), output_type)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """``a @ b`` (after transposing the last two axes of either when asked); differentiable on tensors whose
    second operand is a matrix (a Dense layer's product) or that share their leading batch axes (attention's)."""
    a = _transposed(a) if transpose_a else a
    b = _transposed(b) if transpose_b else b
    if _carries_gradient(a, b) and np.ndim(b) == 2:
        return ops.matmul(a, b)
    if _carries_gradient(a, b):
        return ops.batch_matmul(a, b)
    if _needs_gradient(a, b):
        raise _not_differentiable("matmul")
    return tensor(np.matmul(np.asarray(a), np.asarray(b)))


def einsum(equation, *inputs, name=None):
    """``np.einsum``; differentiable on tensors for two operands whose every index is in the output or summed
    between both (Keras' EinsumDense and MultiHeadAttention equations: ``ops.einsum`` says which)."""
    if _carries_gradient(*inputs):
        if len(inputs) != 2:
            ops.einsum_parse(equation)  # names the supported form
            raise ValueError(f"einsum: {equation!r} was given {len(inputs)} tensors: it needs exactly 2")
        return ops.einsum(equation, *inputs)
    return tensor(np.einsum(equation, *(np.asarray(x) for x in inputs)))


def _transposed(x):
    perm = (*range(np.ndim(x) - 2), np.ndim(x) - 1, np.ndim(x) - 2)
    return ops.transpose(x, perm=perm) if _carries_gradient(x) else np.transpose(x, perm)
