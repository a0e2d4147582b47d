"""``keras.applications``: the models users bring, built as tf-keras builds them (``weights=None``, or the
``"imagenet"`` file Keras downloads, read from ``~/.keras/models``).

Example:

>>> with ipu.utils.shape_only_weights():          # no values: a ResNet-50 to size costs no memory
...     model = keras.applications.ResNet50(weights=None)
>>> model.count_params(), model.output_shape
(25636712, (None, 1000))
"""

from . import imagenet_utils, mobilenet_v2, resnet, resnet50
from .mobilenet_v2 import MobileNetV2
from .resnet import ResNet50

__all__ = ["MobileNetV2", "ResNet50", "imagenet_utils", "mobilenet_v2", "resnet", "resnet50"]
