"""``tf.cast``, ``tf.constant``, ``tf.reshape``, ``tf.one_hot``... : the array functions input pipelines use,
on numpy, with TensorFlow's argument names and defaults. ``cast``, ``reshape``, ``expand_dims``, ``squeeze``,
``transpose``, ``concat`` and ``identity`` given an autograd Tensor apply its op (:mod:`.differentiable`)."""

import numpy as np

from ..autograd import ops
from ..dtypes import as_dtype
from .differentiable import carries_gradient as _carries_gradient
from .tensor import dimensions, python_default, tensor


def cast(x, dtype, name=None):
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero, as in TensorFlow)."""
    if _carries_gradient(x) and as_dtype(dtype).dtype.kind == "f":
        return ops.cast(x, as_dtype(dtype).dtype)
    return tensor(np.asarray(x).astype(as_dtype(dtype).dtype))


def constant(value, dtype=None, shape=None, name=None):
    """A tensor holding ``value``; a single value fills ``shape`` when one is given."""
    result = python_default(value, dtype)
    if shape is None:
        return result
    shape = tuple(shape)
    if result.size == 1:
        return tensor(np.full(shape, result.reshape(()), dtype=result.dtype))
    if result.size != int(np.prod(shape)):
        raise TypeError(f"tf.constant: expected {int(np.prod(shape))} values for shape {shape}, got {result.size}")
    return tensor(result.reshape(shape))


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    return python_default(value, dtype if dtype is not None else dtype_hint)


def identity(input, name=None):  # noqa: A002 (TensorFlow's argument name)
    if _carries_gradient(input):
        return input
    return tensor(np.array(input))


def stop_gradient(input, name=None):  # noqa: A002
    """The same values, through which no gradient flows back."""
    return tensor(np.array(input))


def is_tensor(x) -> bool:
    """Whether ``x`` is a tensor (a ``tf`` result, a model's output, a variable) rather than a Python value."""
    return isinstance(x, np.ndarray) or _carries_gradient(x)


def reshape(tensor_, shape, name=None):
    if _carries_gradient(tensor_):
        return ops.reshape(tensor_, np.empty(tensor_.shape, np.bool_).reshape(dimensions(shape)).shape)
    return tensor(np.reshape(tensor_, dimensions(shape)))


def expand_dims(input, axis, name=None):  # noqa: A002
    if _carries_gradient(input):
        return ops.reshape(input, np.expand_dims(np.empty(input.shape, np.bool_), axis).shape)
    return tensor(np.expand_dims(input, axis))


def squeeze(input, axis=None, name=None):  # noqa: A002
    axis = None if axis is None else tuple(int(a) for a in np.atleast_1d(axis))
    if _carries_gradient(input):
        return ops.reshape(input, np.squeeze(np.empty(input.shape, np.bool_), axis).shape)
    return tensor(np.squeeze(input, axis=axis))


def transpose(a, perm=None, conjugate=False, name=None):
    if _carries_gradient(a):
        return ops.transpose(a, perm=None if perm is None else tuple(int(p) for p in perm))
    return tensor(np.transpose(a, perm))


def concat(values, axis, name=None):
    if _carries_gradient(*values):
        return ops.concatenate(list(values), axis=int(axis))
    return tensor(np.concatenate([np.asarray(v) for v in values], axis=axis))


def stack(values, axis=0, name=None):
    return tensor(np.stack([np.asarray(v) for v in values], axis=axis))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """Rows of ``depth`` values, ``on_value`` (1) at each index and ``off_value`` (0) elsewhere; an index
    outside [0, depth) gives a row of ``off_value``, as in TensorFlow."""
    indices = np.asarray(indices)
    dtype = as_dtype(dtype or "float32").dtype
    on = 1 if on_value is None else on_value
    off = 0 if off_value is None else off_value
    hot = indices[..., np.newaxis] == np.arange(depth)
    result = np.where(hot, np.asarray(on, dtype), np.asarray(off, dtype)).astype(dtype)
    return tensor(result if axis in (None, -1) else np.moveaxis(result, -1, axis))


def shape(input, out_type="int32", name=None):  # noqa: A002
    return tensor(np.shape(input), out_type)


def size(input, out_type="int32", name=None):  # noqa: A002
    return tensor(np.size(input), out_type)


def rank(input, name=None):  # noqa: A002
    return tensor(np.ndim(input), "int32")


def zeros(shape, dtype="float32", name=None):
    return tensor(np.zeros(dimensions(shape), as_dtype(dtype).dtype))


def ones(shape, dtype="float32", name=None):
    return tensor(np.ones(dimensions(shape), as_dtype(dtype).dtype))


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    return tensor(np.zeros_like(input, None if dtype is None else as_dtype(dtype).dtype))


def ones_like(input, dtype=None, name=None):  # noqa: A002
    return tensor(np.ones_like(input, None if dtype is None else as_dtype(dtype).dtype))


def fill(dims, value, name=None):
    return tensor(np.full(dimensions(dims), value, dtype=python_default(value).dtype))


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 (tf.range)
    """The numbers from ``start`` (0 when only one bound is given) up to ``limit``, by ``delta``; as the bound of
    a ``for`` loop in a ``tf.function`` run by ``strategy.run``, an on-device loop (``ipu.custom_loop``).

    Example:

    >>> import ipu_teach.tensorflow as tf
    >>> tf.range(4), [int(step) for step in tf.range(2, 8, 3)]
    (EagerTensor([0, 1, 2, 3], dtype=int32), [2, 5])
    """
    if limit is None:
        start, limit = 0, start
    values = np.arange(start, limit, delta)
    return python_default(values if dtype else values.tolist(), dtype)


def gather(params, indices, axis=None, batch_dims=0, name=None):
    return tensor(np.take(params, indices, axis=0 if axis is None else axis))


def where(condition, x=None, y=None, name=None):
    if x is None and y is None:
        return tensor(np.argwhere(condition), "int64")
    return tensor(np.where(condition, x, y))


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    return tensor(np.clip(t, clip_value_min, clip_value_max))
