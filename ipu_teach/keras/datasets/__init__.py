"""Data sets in Keras' format (``keras.datasets.mnist.load_data()``), offline first."""
from . import mnist

__all__ = ["mnist"]
