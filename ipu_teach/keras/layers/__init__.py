"""Keras layers.

Example:

>>> x = keras.Input(shape=(28, 28, 1))
>>> y = keras.layers.Conv2D(8, 3, activation="relu")(x)
>>> y = keras.layers.MaxPooling2D()(y)
>>> keras.layers.Dense(10)(keras.layers.Flatten()(y)).shape
(None, 10)
"""

from .base import Input, InputLayer, KerasTensor, Layer
from .convolutional import Conv1D, Conv2D
from .core import Activation, Dense, Dropout, Flatten, ReLU, Reshape, Softmax
from .embedding import Embedding
from .lambda_layer import Lambda
from .global_pooling import GlobalAveragePooling2D, GlobalAvgPool2D
from .layer_normalization import LayerNormalization
from .merging import Add, Average, Concatenate, Multiply, Subtract, add, average, concatenate, multiply, subtract
from .normalization import BatchNormalization
from .pooling import AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D
from .recurrent import GRU, LSTM
from .reshaping import Permute, ZeroPadding2D

Convolution1D = Conv1D
Convolution2D = Conv2D

__all__ = [
    "Activation",
    "Add",
    "Average",
    "AveragePooling2D",
    "AvgPool2D",
    "BatchNormalization",
    "Concatenate",
    "Conv1D",
    "Conv2D",
    "Convolution1D",
    "Convolution2D",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "GRU",
    "GlobalAveragePooling2D",
    "GlobalAvgPool2D",
    "Input",
    "InputLayer",
    "KerasTensor",
    "LSTM",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "MaxPool2D",
    "MaxPooling2D",
    "Multiply",
    "Permute",
    "ReLU",
    "Reshape",
    "Softmax",
    "Subtract",
    "ZeroPadding2D",
    "add",
    "average",
    "concatenate",
    "multiply",
    "subtract",
]
