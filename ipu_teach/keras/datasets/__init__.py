"""Data sets in Keras' format (``keras.datasets.mnist.load_data()``), offline first.

Example:

>>> (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
ipu-teach: MNIST ...
>>> x_test.shape[1:]
(28, 28)
"""

from . import mnist

__all__ = ["mnist"]
