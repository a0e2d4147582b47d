"""The ops the Keras layers are made of, each a :class:`~ipu_teach.autograd.function.Function`, and one function
per op, which is how layers apply it (as Keras' ``Dense.call`` uses ``ops.matmul``): ``ops.relu(x)``, never
``ops.ReLU.apply(x)``. A new op adds its function here (tests/autograd/test_op_contract.py finds every op file).

Example:

>>> from ipu_teach.autograd import Tensor, ops
>>> ops.add(Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float32))).data
array([2., 2.], dtype=float32)
>>> ops.relu(Tensor(np.array([-1.0, 2.0], np.float32))).data
array([0., 2.], dtype=float32)
"""

from . import elementwise_losses as _losses
from .batch_matmul import BatchMatMul
from .capture import CaptureGradient
from .einsum import einsum
from .einsum import parse as einsum_parse
from .activations import ELU, Exp, Log, ReLU, Sigmoid, Softmax, Softplus, Tanh
from .conv import Conv2D
from .conv_transpose import Conv2DTranspose
from .depthwise_conv import DepthwiseConv2D
from .elementwise import Abs, Add, Cast, Div, Mul, Neg, Sub
from .fused import Conv2DReLU
from .gather import Gather
from .gelu import GELU
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


# An op whose arguments are its input tensors is applied as it is: its function is its ``apply``.
absolute = Abs.apply
add = Add.apply
sub = Sub.apply
mul = Mul.apply
div = Div.apply
neg = Neg.apply
relu = ReLU.apply
sigmoid = Sigmoid.apply
tanh = Tanh.apply
exp = Exp.apply
log = Log.apply
softplus = Softplus.apply
softmax = Softmax.apply
batch_matmul = BatchMatMul.apply
gather = Gather.apply
# the cross-entropies of (logits or probabilities, labels) and Keras' other losses of (predictions, labels)
softmax_cross_entropy = SoftmaxCrossEntropy.apply
sparse_softmax_cross_entropy = SparseSoftmaxCrossEntropy.apply
categorical_crossentropy_probs = CategoricalCrossentropyProbs.apply
sparse_categorical_crossentropy_probs = SparseCategoricalCrossentropyProbs.apply
sigmoid_binary_crossentropy = SigmoidBinaryCrossentropy.apply
binary_crossentropy_probs = BinaryCrossentropyProbs.apply
mean_absolute_percentage_error = _losses.MeanAbsolutePercentageError.apply
mean_squared_logarithmic_error = _losses.MeanSquaredLogarithmicError.apply
log_cosh = _losses.LogCosh.apply
poisson = _losses.Poisson.apply
kl_divergence = _losses.KLDivergence.apply
hinge = _losses.Hinge.apply
squared_hinge = _losses.SquaredHinge.apply
categorical_hinge = _losses.CategoricalHinge.apply


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


def cast(x, dtype):
    return Cast.apply(x, dtype=str(dtype))


def reduce_sum(x, axis=None, keepdims=False):
    return Sum.apply(x, axis=axis, keepdims=keepdims)


def reduce_mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (all axes: None), as ``reduce_sum`` sums."""
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


def transpose(x, perm=None):
    """The axes reordered by ``perm`` (None: reversed), as ``np.transpose``."""
    return Transpose.apply(x, perm=perm)


def pad(x, pads):
    return Pad.apply(x, pads=pads)


def upsample(x, size=(2, 2)):
    """Each value of NHWC ``x`` repeated ``size`` (rows, columns) times, as ``keras.layers.UpSampling2D``."""
    return Upsample.apply(x, size=size)


def reverse(x, axis=1):
    return Reverse.apply(x, axis=axis)


def general_relu(x, **options):
    """Keras' ``relu`` with a negative slope, a ceiling or a threshold (``alpha``, ``max_value``, ``threshold``);
    ``ops.relu`` is the plain one. Options left out keep ``GeneralReLU``'s defaults and are not recorded."""
    return GeneralReLU.apply(x, **options)


def elu(x, alpha=1.0):
    return ELU.apply(x, alpha=alpha)


def gelu(x, approximate=False):
    """The Gaussian error linear unit, exact or (``approximate``) by its tanh formula."""
    return GELU.apply(x, approximate=approximate)


def conv2d(x, kernel, bias, **options):
    """Options (``strides``, ``padding``, ``dilation``) as ``Conv2D`` takes them; those left out are not recorded."""
    return Conv2D.apply(x, kernel, bias, **options)


def conv2d_relu(x, kernel, bias, **options):
    """``relu(conv2d(...))`` fused on the host, recorded as the two ops (``fused.Conv2DReLU``)."""
    return Conv2DReLU.apply(x, kernel, bias, **options)


def conv2d_transpose(x, kernel, bias, **options):
    """The transposed convolution; options (``strides``, ``padding``, ``dilation``) as ``Conv2DTranspose`` takes
    them, those left out not recorded."""
    return Conv2DTranspose.apply(x, kernel, bias, **options)


def depthwise_conv2d(x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
    return DepthwiseConv2D.apply(x, kernel, strides=strides, padding=padding, dilation=dilation)


def max_pool2d(x, pool_size=(2, 2), strides=None, padding="valid"):
    return MaxPool2D.apply(x, pool_size=pool_size, strides=strides, padding=padding)


def avg_pool2d(x, pool_size=(2, 2), strides=None, padding="valid"):
    """The mean of each window (``max_pool2d`` takes the maximum)."""
    return AvgPool2D.apply(x, pool_size=pool_size, strides=strides, padding=padding)


def batch_norm(x, gamma, beta, mean, var, epsilon=1e-3, training=False):
    return BatchNorm.apply(x, gamma, beta, mean, var, epsilon=epsilon, training=training)


def layer_norm(x, gamma, beta, epsilon=1e-3):
    return LayerNorm.apply(x, gamma, beta, epsilon=epsilon)


def capture_gradient(x, store=None, tag=None):
    """``x`` unchanged; its gradient is added to ``store[tag]`` on the way back (``capture.CaptureGradient``)."""
    return CaptureGradient.apply(x, store=store, tag=tag)


def huber(y_pred, y_true, delta=1.0):
    return _losses.Huber.apply(y_pred, y_true, delta=delta)


def cosine_similarity(y_pred, y_true, axis=-1):
    return _losses.CosineSimilarity.apply(y_pred, y_true, axis=axis)
