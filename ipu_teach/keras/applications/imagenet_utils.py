"""What every ``keras.applications`` model shares, as tf-keras' ``applications/imagenet_utils.py`` does it: the
input shape a model accepts, the padding a strided 3x3 needs, the classifier activations pretrained weights allow,
and the weights themselves.

ipu-teach downloads nothing: ``weights="imagenet"`` loads the .h5 file Keras would have downloaded, from the folder
where Keras' ``get_file`` keeps it (``~/.keras/models``, or ``$KERAS_HOME/models``), else refuses and names the
file, the folder and where Keras gets it.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .. import activations, layers
from ..datasets.mnist import keras_datasets_dir

MODES = {
    # mode: (RGB to BGR, scale, per-channel mean subtracted after scaling, per-channel divisor)
    "caffe": (True, 1.0, (103.939, 116.779, 123.68), None),
    "tf": (False, 1 / 127.5, (1.0, 1.0, 1.0), None),
    "torch": (False, 1 / 255.0, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
}


def preprocess_input(x, data_format=None, mode="caffe"):
    """Images (channels last, values 0-255) as the model was trained on them, as tf-keras'
    ``imagenet_utils.preprocess_input``: ``"caffe"`` (ResNet50) RGB to BGR and ImageNet's mean pixel subtracted,
    ``"tf"`` (MobileNetV2) scaled to [-1, 1], ``"torch"`` scaled to [0, 1] and standardised per channel.

    Returns a new float32 array (a float input keeps its dtype); unlike Keras, ``x`` itself is never modified.

    Example:

    >>> keras.applications.mobilenet_v2.preprocess_input(np.array([[[0, 127.5, 255]]]))
    array([[[-1.,  0.,  1.]]])
    """
    if mode not in MODES:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    if data_format not in (None, "channels_last"):
        raise ValueError(f"preprocess_input: ipu-teach supports data_format='channels_last' only, got {data_format!r}")
    x = np.asarray(x)
    x = x.astype(x.dtype if np.issubdtype(x.dtype, np.floating) else np.float32)  # a copy: x stays as given
    to_bgr, scale, mean, std = MODES[mode]
    if to_bgr:
        x = x[..., ::-1]
    x = x * x.dtype.type(scale) - np.asarray(mean, x.dtype)
    return x if std is None else x / np.asarray(std, x.dtype)


def obtain_input_shape(input_shape, default_size, min_size, require_flatten, weights):
    """The per-sample input shape (channels last), checked as tf-keras' ``obtain_input_shape``: a classifier
    (``require_flatten``) needs a static shape, pretrained weights their training size and 3 channels, and no
    image is smaller than ``min_size``. Without ``input_shape``: the default size, or ``(None, None, 3)``."""
    default_shape = (default_size, default_size, 3 if input_shape is None else input_shape[-1])
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError(
                "When setting `include_top=True` and loading `imagenet` weights, `input_shape` should be "
                f"{default_shape}.  Received: input_shape={input_shape}"
            )
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(size is not None and size < min_size for size in input_shape[:2]):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError(
            f"If `include_top` is True, you should specify a static `input_shape`. Received: input_shape={input_shape}"
        )
    return input_shape


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) zero padding before a stride-2 ``kernel_size`` convolution with "valid"
    padding, so that it sees the image as TensorFlow's "same" would (one row less on top for an even size)."""
    size = inputs.shape[1:3]
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel_size // 2, kernel_size // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def top(x, include_top, pooling, classes, classifier_activation, names=(None, None)):
    """The end of every application: the classifier (global average pooling, then a Dense ``"predictions"``), or
    without it the ``pooling`` asked for (``"avg"``, ``"max"`` or None); ``names`` of the two pooling layers (None:
    Keras' default names)."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=names[0])(x)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=names[1])(x)
    return x


def check_weights_argument(weights, include_top, classes, classifier_activation) -> None:
    """tf-keras' checks of ``weights`` (None, "imagenet" or an existing file) against the top's options."""
    if not (weights in {"imagenet", None} or os.path.exists(weights)):
        raise ValueError(
            "The `weights` argument should be either `None` (random initialization), `imagenet` (pre-training on "
            f"ImageNet), or the path to the weights file to be loaded.  Received `weights={weights}`"
        )
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(
            'If using `weights` as `"imagenet"` with `include_top` as true, `classes` should be 1000. '
            f"Received `classes={classes}`"
        )
    if include_top and weights is not None:
        allowed = {activations.get("softmax"), activations.get(None)}
        if activations.get(classifier_activation) not in allowed:
            raise ValueError(
                "Only `None` and `softmax` activations are allowed for the `classifier_activation` argument when "
                "using pretrained weights, with `include_top=True`; Received: "
                f"classifier_activation={classifier_activation}"
            )


def keras_models_dir() -> Path:
    """Where Keras' ``get_file(..., cache_subdir="models")`` keeps pretrained weights: ``~/.keras/models``."""
    return keras_datasets_dir().parent / "models"


def load_pretrained(model, weights, file_name: str, url: str) -> None:
    """Loads ``weights`` into ``model``: a path as given, ``"imagenet"`` from ``file_name`` in Keras' models
    folder (FileNotFoundError naming the file, the folder and ``url`` if it is not there); None, nothing."""
    if weights is None:
        return
    if weights == "imagenet":
        path = keras_models_dir() / file_name
        if not path.is_file():
            raise FileNotFoundError(
                f"{model.name}: weights='imagenet' needs {file_name}, not found in {path.parent}. ipu-teach "
                f"downloads nothing: put the file Keras downloads ({url}) there, or pass weights=None for "
                "random initialization (all that sizing a model needs)"
            )
        weights = path
    model.load_weights(str(weights))
