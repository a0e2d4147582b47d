"""Data sets in Keras' format (``keras.datasets.mnist.load_data()``, ``keras.datasets.cifar10.load_data()``), offline.

Example:

>>> (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
ipu-teach: MNIST ...
>>> x_test.shape[1:]
(28, 28)
"""

from . import cifar10, mnist

__all__ = ["cifar10", "mnist"]
