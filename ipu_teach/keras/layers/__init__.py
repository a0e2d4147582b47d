"""Keras layers."""
from .base import Input, InputLayer, KerasTensor, Layer
from .convolutional import Conv2D
from .core import Activation, Dense, Dropout, Flatten, ReLU, Reshape, Softmax
from .normalization import BatchNormalization
from .pooling import AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D

Convolution2D = Conv2D

__all__ = ["Activation", "AveragePooling2D", "AvgPool2D", "BatchNormalization", "Conv2D", "Convolution2D",
           "Dense", "Dropout", "Flatten", "Input", "InputLayer", "KerasTensor", "Layer", "MaxPool2D",
           "MaxPooling2D", "ReLU", "Reshape", "Softmax"]
