"""``torchvision`` for ipu-teach: ``datasets`` (MNIST offline, FashionMNIST and CIFAR10 from your files) and
``transforms`` (Compose, ToTensor, Normalize), on :mod:`ipu_teach.torch`."""

from . import datasets, transforms

__version__ = "0.15.0+ipu_teach"
__all__ = ["datasets", "transforms"]
