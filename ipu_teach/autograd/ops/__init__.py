"""The ops the Keras layers are made of, each a :class:`~ipu_teach.autograd.function.Function`.

Example:

>>> from ipu_teach.autograd import Tensor, ops
>>> ops.add(Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float32))).data
array([2., 2.], dtype=float32)
"""

from .batch_matmul import BatchMatMul
from .einsum import einsum
from .einsum import parse as einsum_parse
from .activations import ELU, Exp, Log, ReLU, Sigmoid, Softmax, Softplus, Tanh
from .conv import Conv2D
from .conv_transpose import Conv2DTranspose
from .depthwise_conv import DepthwiseConv2D
from .elementwise import Abs, Add, Cast, Div, Mul, Neg, Sub
from .fused import Conv2DReLU
from .gather import Gather
from .linalg import MatMul
from .losses import (
    BinaryCrossentropyProbs,
    CategoricalCrossentropyProbs,
    SigmoidBinaryCrossentropy,
    SoftmaxCrossEntropy,
    SparseCategoricalCrossentropyProbs,
    SparseSoftmaxCrossEntropy,
)
from .normalization import BatchNorm, LayerNorm
from .pooling import AvgPool2D, MaxPool2D
from .relu_family import GeneralReLU
from .rearrange import Concatenate, Pad, Reverse, Slice, StridedSlice, Transpose, Upsample, strided_slice_key
from .shape import Mean, Reshape, Sum


def cast(x, dtype):
    return Cast.apply(x, dtype=str(dtype))


def add(a, b):
    return Add.apply(a, b)


def sub(a, b):
    return Sub.apply(a, b)


def mul(a, b):
    return Mul.apply(a, b)


def div(a, b):
    return Div.apply(a, b)


def neg(a):
    return Neg.apply(a)


def matmul(a, b):
    """Returns the matrix product ``a @ b`` as a Tensor, recorded for the backward pass (the ``MatMul`` op).

    The op Dense layers are made of. Its cost on the IPU (FLOPs, bytes, the matrix product the AMP runs)
    is what the executor lowers; its numerics follow ``precision.ipu_numerics`` (fp16 inputs with float or
    half partials).

    Args:
      a: A Tensor (or array) of shape ``(..., m, k)``.
      b: A Tensor (or array) of shape ``(k, n)``.

    Example:

    >>> from ipu_teach.autograd import Tensor, ops
    >>> a = Tensor(np.ones((2, 3), np.float32), requires_grad=True)
    >>> y = ops.matmul(a, Tensor(np.full((3, 2), 2.0, np.float32)))
    >>> y.data
    array([[6., 6.],
           [6., 6.]], dtype=float32)
    >>> y.backward(np.ones((2, 2), np.float32))
    >>> a.grad
    array([[4., 4., 4.],
           [4., 4., 4.]], dtype=float32)
    """
    return MatMul.apply(a, b)


def reduce_sum(x, axis=None, keepdims=False):
    return Sum.apply(x, axis=axis, keepdims=keepdims)


def reduce_mean(x, axis=None, keepdims=False):
    return Mean.apply(x, axis=axis, keepdims=keepdims)


def reshape(x, shape):
    return Reshape.apply(x, shape=tuple(shape))


def concatenate(tensors, axis=-1):
    return Concatenate.apply(*tensors, axis=axis)


def slice_axis(x, start, stop, axis=-1):
    return Slice.apply(x, axis=axis, start=start, stop=stop)


def strided_slice(x, key):
    """``x[key]`` as TensorFlow indexes a tensor (see ``rearrange.strided_slice_key``)."""
    return StridedSlice.apply(x, key=strided_slice_key(key))
