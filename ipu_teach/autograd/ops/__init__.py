"""The ops the Keras layers are made of, each a :class:`~ipu_teach.autograd.function.Function`, and one function
per op, which is how layers apply it (as Keras' ``Dense.call`` uses ``ops.matmul``): ``ops.relu(x)``, never
``ops.ReLUOp.apply(x)``. A new op adds its function here (tests/autograd/test_op_contract.py finds every op file).

Example:

>>> from ipu_teach.autograd import Tensor, ops
>>> ops.add(Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float32))).data
array([2., 2.], dtype=float32)
>>> ops.relu(Tensor(np.array([-1.0, 2.0], np.float32))).data
array([0., 2.], dtype=float32)
"""

from . import elementwise_losses as _losses
from .batch_matmul import BatchMatMulOp
from .capture import CaptureGradientOp
from .einsum import einsum
from .einsum import parse as einsum_parse
from .activations import ELUOp, ExpOp, LogOp, ReLUOp, SigmoidOp, SoftmaxOp, SoftplusOp, TanhOp
from .conv import Conv2DOp
from .conv_transpose import Conv2DTransposeOp
from .depthwise_conv import DepthwiseConv2DOp
from .elementwise import AbsOp, AddOp, CastOp, DivOp, MulOp, NegOp, SubOp
from .fused import Conv2DReLUOp
from .gather import GatherOp
from .gelu import GELUOp
from .group_normalization import GroupNormOp
from .linalg import MatMulOp
from .losses import (
    BinaryCrossentropyProbsOp,
    CategoricalCrossentropyProbsOp,
    SigmoidBinaryCrossentropyOp,
    SoftmaxCrossEntropyOp,
    SparseCategoricalCrossentropyProbsOp,
    SparseSoftmaxCrossEntropyOp,
)
from .normalization import BatchNormOp, LayerNormOp
from .pooling import AvgPool2DOp, MaxPool2DOp
from .relu_family import GeneralReLUOp
from .rearrange import (
    ConcatenateOp,
    PadOp,
    ReverseOp,
    SliceOp,
    StridedSliceOp,
    TransposeOp,
    UpsampleOp,
    strided_slice_key,
)
from .shape import MeanOp, ReshapeOp, SumOp


# An op whose arguments are its input tensors is applied as it is: its function is its ``apply``.
absolute = AbsOp.apply
add = AddOp.apply
sub = SubOp.apply
mul = MulOp.apply
div = DivOp.apply
neg = NegOp.apply
relu = ReLUOp.apply
sigmoid = SigmoidOp.apply
tanh = TanhOp.apply
exp = ExpOp.apply
log = LogOp.apply
softplus = SoftplusOp.apply
softmax = SoftmaxOp.apply
batch_matmul = BatchMatMulOp.apply
gather = GatherOp.apply
# the cross-entropies of (logits or probabilities, labels) and Keras' other losses of (predictions, labels)
softmax_cross_entropy = SoftmaxCrossEntropyOp.apply
sparse_softmax_cross_entropy = SparseSoftmaxCrossEntropyOp.apply
categorical_crossentropy_probs = CategoricalCrossentropyProbsOp.apply
sparse_categorical_crossentropy_probs = SparseCategoricalCrossentropyProbsOp.apply
sigmoid_binary_crossentropy = SigmoidBinaryCrossentropyOp.apply
binary_crossentropy_probs = BinaryCrossentropyProbsOp.apply
mean_absolute_percentage_error = _losses.MeanAbsolutePercentageErrorOp.apply
mean_squared_logarithmic_error = _losses.MeanSquaredLogarithmicErrorOp.apply
log_cosh = _losses.LogCoshOp.apply
poisson = _losses.PoissonOp.apply
kl_divergence = _losses.KLDivergenceOp.apply
hinge = _losses.HingeOp.apply
squared_hinge = _losses.SquaredHingeOp.apply
categorical_hinge = _losses.CategoricalHingeOp.apply


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
    return MatMulOp.apply(a, b)


def cast(x, dtype):
    return CastOp.apply(x, dtype=str(dtype))


def reduce_sum(x, axis=None, keepdims=False):
    return SumOp.apply(x, axis=axis, keepdims=keepdims)


def reduce_mean(x, axis=None, keepdims=False):
    """The mean over ``axis`` (all axes: None), as ``reduce_sum`` sums."""
    return MeanOp.apply(x, axis=axis, keepdims=keepdims)


def reshape(x, shape):
    return ReshapeOp.apply(x, shape=tuple(shape))


def concatenate(tensors, axis=-1):
    return ConcatenateOp.apply(*tensors, axis=axis)


def slice_axis(x, start, stop, axis=-1):
    return SliceOp.apply(x, axis=axis, start=start, stop=stop)


def strided_slice(x, key):
    """``x[key]`` as TensorFlow indexes a tensor (see ``rearrange.strided_slice_key``)."""
    return StridedSliceOp.apply(x, key=strided_slice_key(key))


def transpose(x, perm=None):
    """The axes reordered by ``perm`` (None: reversed), as ``np.transpose``."""
    return TransposeOp.apply(x, perm=perm)


def pad(x, pads):
    return PadOp.apply(x, pads=pads)


def upsample(x, size=(2, 2)):
    """Each value of NHWC ``x`` repeated ``size`` (rows, columns) times, as ``keras.layers.UpSampling2D``."""
    return UpsampleOp.apply(x, size=size)


def reverse(x, axis=1):
    return ReverseOp.apply(x, axis=axis)


def general_relu(x, **options):
    """Keras' ``relu`` with a negative slope, a ceiling or a threshold (``alpha``, ``max_value``, ``threshold``);
    ``ops.relu`` is the plain one. Options left out keep ``GeneralReLUOp``'s defaults and are not recorded."""
    return GeneralReLUOp.apply(x, **options)


def elu(x, alpha=1.0):
    return ELUOp.apply(x, alpha=alpha)


def gelu(x, approximate=False):
    """The Gaussian error linear unit, exact or (``approximate``) by its tanh formula."""
    return GELUOp.apply(x, approximate=approximate)


def conv2d(x, kernel, bias, **options):
    """Options (``strides``, ``padding``, ``dilation``) as ``Conv2DOp`` takes them; those left out are not recorded."""
    return Conv2DOp.apply(x, kernel, bias, **options)


def conv2d_relu(x, kernel, bias, **options):
    """``relu(conv2d(...))`` fused on the host, recorded as the two ops (``fused.Conv2DReLUOp``)."""
    return Conv2DReLUOp.apply(x, kernel, bias, **options)


def conv2d_transpose(x, kernel, bias, **options):
    """The transposed convolution; options (``strides``, ``padding``, ``dilation``) as ``Conv2DTransposeOp`` takes
    them, those left out not recorded."""
    return Conv2DTransposeOp.apply(x, kernel, bias, **options)


def depthwise_conv2d(x, kernel, strides=(1, 1), padding="valid", dilation=(1, 1)):
    return DepthwiseConv2DOp.apply(x, kernel, strides=strides, padding=padding, dilation=dilation)


def max_pool2d(x, pool_size=(2, 2), strides=None, padding="valid"):
    return MaxPool2DOp.apply(x, pool_size=pool_size, strides=strides, padding=padding)


def avg_pool2d(x, pool_size=(2, 2), strides=None, padding="valid"):
    """The mean of each window (``max_pool2d`` takes the maximum)."""
    return AvgPool2DOp.apply(x, pool_size=pool_size, strides=strides, padding=padding)


def batch_norm(x, gamma, beta, mean, var, epsilon=1e-3, training=False):
    return BatchNormOp.apply(x, gamma, beta, mean, var, epsilon=epsilon, training=training)


def layer_norm(x, gamma, beta, epsilon=1e-3):
    return LayerNormOp.apply(x, gamma, beta, epsilon=epsilon)


def group_norm(x, gamma, beta, groups, epsilon=1e-3, channels_last=True, strided=False, scale=True, center=True):
    """popnn's group normalisation (``group_normalization.GroupNormOp``): ``groups`` groups of the channels (last, or on
    axis 1), runs of neighbours or, ``strided``, every ``groups``-th one; ``gamma`` and ``beta`` per channel, used
    with ``scale`` and ``center``."""
    return GroupNormOp.apply(
        x,
        gamma,
        beta,
        groups=groups,
        epsilon=epsilon,
        channels_last=channels_last,
        strided=strided,
        scale=scale,
        center=center,
    )


def capture_gradient(x, store=None, tag=None):
    """``x`` unchanged; its gradient is added to ``store[tag]`` on the way back (``capture.CaptureGradient``)."""
    return CaptureGradientOp.apply(x, store=store, tag=tag)


def huber(y_pred, y_true, delta=1.0):
    return _losses.HuberOp.apply(y_pred, y_true, delta=delta)


def cosine_similarity(y_pred, y_true, axis=-1):
    return _losses.CosineSimilarityOp.apply(y_pred, y_true, axis=axis)
