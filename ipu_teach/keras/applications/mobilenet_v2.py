"""``keras.applications.MobileNetV2``: inverted residual blocks of depthwise convolutions, built as tf-keras'
``applications/mobilenet_v2.py`` builds it (the same layers, names, order and shapes; 3,538,984 parameters at
224x224 with the top), the smaller family beside ResNet-50 for sizing.

Reference: Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks" (CVPR 2018).
"""

from __future__ import annotations

from .. import layers
from ..models import Model
from . import imagenet_utils

WEIGHTS_URL = "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/"
PRETRAINED_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
PRETRAINED_SIZES = (96, 128, 160, 192, 224)
#: (filters, stride, expansion) of blocks 0 to 16, as tf-keras lists them.
BLOCKS = (
    (16, 1, 1),
    (24, 2, 6),
    (24, 1, 6),
    (32, 2, 6),
    (32, 1, 6),
    (32, 1, 6),
    (64, 2, 6),
    (64, 1, 6),
    (64, 1, 6),
    (64, 1, 6),
    (96, 1, 6),
    (96, 1, 6),
    (96, 1, 6),
    (160, 2, 6),
    (160, 1, 6),
    (160, 1, 6),
    (320, 1, 6),
)


def MobileNetV2(
    input_shape=None,
    alpha=1.0,
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """Instantiates the MobileNetV2 architecture (as ``tf.keras.applications.MobileNetV2``).

    Args:
      input_shape: Optional per-sample shape; default ``(224, 224, 3)`` (or the square size given, if one of 96,
        128, 160, 192, 224). Images are at least 32x32.
      alpha: The width multiplier: the filters of every block are scaled by it (rounded to multiples of 8).
      include_top: Whether to include the classifier (global average pooling and a Dense of ``classes``).
      weights: None (random initialization), ``"imagenet"`` (the file Keras downloads, read from
        ``~/.keras/models``: ipu-teach downloads nothing) or the path of a weights file.
      input_tensor: Optional Keras tensor (the output of ``keras.Input()``) to use as the image input.
      pooling: Without the top: None (the last block's 4D output), ``"avg"`` or ``"max"`` (global pooling).
      classes: The number of classes of the top.
      classifier_activation: The top's activation (None: the logits).

    Returns:
      A ``keras.Model`` named ``mobilenetv2_<alpha>_<rows>`` (``mobilenetv2_1.00_224``).

    Raises:
      ValueError: for arguments tf-keras refuses, in its words.
      FileNotFoundError: for ``weights="imagenet"`` when the file is not in Keras' models folder.

    Example:

    >>> model = keras.applications.MobileNetV2(weights=None)
    >>> model.name, model.count_params(), len(model.layers)
    ('mobilenetv2_1.00_224', 3538984, 156)
    """
    imagenet_utils.check_weights_argument(weights, include_top, classes, classifier_activation)
    if input_shape is None and input_tensor is not None:
        rows, cols = input_tensor.shape[1:3]
    else:
        rows, cols = (None, None) if input_shape is None else tuple(input_shape)[:2]
    default_size = rows if rows == cols and rows in PRETRAINED_SIZES else 224
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size, 32, include_top, weights)
    rows = input_shape[0]
    if weights == "imagenet":
        if alpha not in PRETRAINED_ALPHAS:
            raise ValueError(
                "If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, `1.0`, `1.3` "
                f"or `1.4` only; Received `alpha={alpha}`"
            )
        if rows != input_shape[1] or rows not in PRETRAINED_SIZES:
            rows = 224
    inputs = layers.Input(shape=input_shape) if input_tensor is None else input_tensor
    x = layers.Conv2D(
        _make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="Conv1"
    )(inputs)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion, block_id=block_id)
    last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation)
    model = Model(inputs, x, name=f"mobilenetv2_{alpha:0.2f}_{rows}")
    top = "" if include_top else "_no_top"
    file_name = f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_{rows}{top}.h5"
    imagenet_utils.load_pretrained(model, weights, file_name, WEIGHTS_URL + file_name)
    return model


def preprocess_input(x, data_format=None):
    """MobileNetV2's input preprocessing (``"tf"``): pixel values 0-255 scaled to [-1, 1]."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    """An inverted residual block: a 1x1 expansion (not in block 0), a 3x3 depthwise convolution (strided, after
    explicit padding, when ``stride`` is 2) and a linear 1x1 projection, added to the input when shapes allow."""
    in_channels = inputs.shape[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(
            expansion * in_channels, kernel_size=1, padding="same", use_bias=False, name=prefix + "expand"
        )(x)
        x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name=prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(
        kernel_size=3,
        strides=stride,
        use_bias=False,
        padding="same" if stride == 1 else "valid",
        name=prefix + "depthwise",
    )(x)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name=prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, name=prefix + "project")(x)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name=prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def _make_divisible(v, divisor, min_value=None):
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``), never 10% below ``v``."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v
