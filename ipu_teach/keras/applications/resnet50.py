"""``keras.applications.resnet50``: the module name tf-keras keeps for ResNet50 (an alias of :mod:`.resnet`)."""

from .resnet import ResNet50, preprocess_input

__all__ = ["ResNet50", "preprocess_input"]
