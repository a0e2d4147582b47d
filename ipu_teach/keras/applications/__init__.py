"""``keras.applications``: the models users bring, built as tf-keras builds them (``weights=None``, or the
``"imagenet"`` file Keras downloads, read from ``~/.keras/models``)."""

from . import imagenet_utils, mobilenet_v2, resnet, resnet50
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50

__all__ = ["MobileNetV2", "ResNet50", "imagenet_utils", "mobilenet_v2", "resnet", "resnet50"]
