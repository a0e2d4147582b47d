"""``keras.applications.ResNet50``: ResNet v1 of bottleneck blocks, built as tf-keras' ``applications/resnet.py``
builds it (the same layers, names, order and shapes, 25,636,712 parameters at 224x224 with the top).

Reference: He et al., "Deep Residual Learning for Image Recognition" (CVPR 2016). Its first use here is sizing:
``ipu.utils.estimate(keras.applications.ResNet50(weights=None), ...)`` at Graphcore's published configurations.
"""

from __future__ import annotations

from .. import layers
from ..models import Model
from . import imagenet_utils

WEIGHTS_URL = "https://storage.googleapis.com/tensorflow/keras-applications/resnet/"


def ResNet50(
    include_top=True,
    weights="imagenet",
    input_tensor=None,
    input_shape=None,
    pooling=None,
    classes=1000,
    classifier_activation="softmax",
):
    """Instantiates the ResNet50 architecture (as ``tf.keras.applications.ResNet50``).

    Args:
      include_top: Whether to include the classifier (global average pooling and a Dense of ``classes``).
      weights: None (random initialization), ``"imagenet"`` (the file Keras downloads, read from
        ``~/.keras/models``: ipu-teach downloads nothing) or the path of a weights file.
      input_tensor: Optional Keras tensor (the output of ``keras.Input()``) to use as the image input.
      input_shape: Optional per-sample shape; with the top it defaults to ``(224, 224, 3)``, without it to
        ``(None, None, 3)``. Images are at least 32x32.
      pooling: Without the top: None (the last block's 4D output), ``"avg"`` or ``"max"`` (global pooling).
      classes: The number of classes of the top.
      classifier_activation: The top's activation (None: the logits).

    Returns:
      A ``keras.Model`` named ``"resnet50"``.

    Raises:
      ValueError: for arguments tf-keras refuses, in its words.
      FileNotFoundError: for ``weights="imagenet"`` when the file is not in Keras' models folder.

    Example:

    >>> model = keras.applications.ResNet50(weights=None)
    >>> model.count_params(), len(model.layers), model.output_shape
    (25636712, 177, (None, 1000))
    """
    imagenet_utils.check_weights_argument(weights, include_top, classes, classifier_activation)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, 224, 32, include_top, weights)
    inputs = layers.Input(shape=input_shape) if input_tensor is None else input_tensor
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, 7, strides=2, name="conv1_conv")(x)
    x = layers.BatchNormalization(epsilon=1.001e-5, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack1(x, 64, 3, stride1=1, name="conv2")
    x = stack1(x, 128, 4, name="conv3")
    x = stack1(x, 256, 6, name="conv4")
    x = stack1(x, 512, 3, name="conv5")
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, ("avg_pool", "max_pool"))
    model = Model(inputs, x, name="resnet50")
    top = "" if include_top else "_notop"
    file_name = f"resnet50_weights_tf_dim_ordering_tf_kernels{top}.h5"
    imagenet_utils.load_pretrained(model, weights, file_name, WEIGHTS_URL + file_name)
    return model


def preprocess_input(x, data_format=None):
    """ResNet50's input preprocessing (``"caffe"``): RGB to BGR, ImageNet's mean pixel subtracted, no scaling."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def block1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    """A bottleneck block: 1x1 (strided), ``kernel_size`` and 1x1 (4 x ``filters``) convolutions with batch
    normalisation, added to the input (or to its 1x1 projection when ``conv_shortcut``), then ReLU."""
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = layers.BatchNormalization(epsilon=1.001e-5, name=name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = layers.BatchNormalization(epsilon=1.001e-5, name=name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="SAME", name=name + "_2_conv")(x)
    x = layers.BatchNormalization(epsilon=1.001e-5, name=name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = layers.BatchNormalization(epsilon=1.001e-5, name=name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def stack1(x, filters, blocks, stride1=2, name=None):
    """``blocks`` bottleneck blocks, the first projecting its shortcut (and strided by ``stride1``)."""
    x = block1(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = block1(x, filters, conv_shortcut=False, name=name + "_block" + str(i))
    return x
