"""Data sets in Keras' format (``keras.datasets.mnist.load_data()``, ``cifar10``, ``fashion_mnist``, ``imdb``), offline:
MNIST's subset is bundled; the others are read from Keras' cache folder when their files are there.

Example:

>>> (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
ipu-teach: MNIST ...
>>> x_test.shape[1:]
(28, 28)
"""

from . import cifar10, fashion_mnist, imdb, mnist

__all__ = ["cifar10", "fashion_mnist", "imdb", "mnist"]
