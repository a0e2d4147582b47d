"""``torchvision`` for ipu-teach: ``datasets`` (MNIST offline, FashionMNIST and CIFAR10 from your files) and
``transforms`` (Compose, ToTensor, Normalize), on :mod:`ipu_teach.torch`.

Example:

>>> import numpy as np
>>> from ipu_teach import torchvision
>>> to_tensor = torchvision.transforms.ToTensor()
>>> to_tensor(np.zeros((28, 28), np.uint8)).shape
torch.Size([1, 28, 28])
"""

from . import datasets, transforms

__version__ = "0.15.0+ipu_teach"
__all__ = ["datasets", "transforms"]
