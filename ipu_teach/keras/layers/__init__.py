"""Keras layers.

Example:

>>> x = keras.Input(shape=(28, 28, 1))
>>> y = keras.layers.Conv2D(8, 3, activation="relu")(x)
>>> y = keras.layers.MaxPooling2D()(y)
>>> keras.layers.Dense(10)(keras.layers.Flatten()(y)).shape
(None, 10)
"""

from types import SimpleNamespace

from .attention import EinsumDense, MultiHeadAttention
from .activation import ELU, LeakyReLU, PReLU, ReLU, ThresholdedReLU
from .base import Input, InputLayer, KerasTensor, Layer
from .convolutional import Conv1D, Conv2D
from .convolutional_variants import Conv2DTranspose, DepthwiseConv2D, SeparableConv2D
from .core import Activation, Dense, Dropout, Flatten, Reshape, Softmax
from .embedding import Embedding
from .lambda_layer import Lambda
from .global_pooling import GlobalAveragePooling2D, GlobalAvgPool2D, GlobalMaxPool2D, GlobalMaxPooling2D
from .layer_normalization import LayerNormalization
from .group_normalization import GroupNormalization
from .merging import Add, Average, Concatenate, Multiply, Subtract, add, average, concatenate, multiply, subtract
from .noise import GaussianNoise, SpatialDropout2D
from .normalization import BatchNormalization
from .pooling import AveragePooling2D, AvgPool2D, MaxPool2D, MaxPooling2D
from .recurrent import GRU, LSTM
from .preprocessing import Normalization, Rescaling
from .wrappers import Bidirectional
from .reshaping import Cropping2D, Permute, UpSampling2D, ZeroPadding2D

Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution2D = SeparableConv2D
experimental = SimpleNamespace(EinsumDense=EinsumDense)  # tf-keras' older home of EinsumDense

__all__ = [
    "Activation",
    "Add",
    "Average",
    "AveragePooling2D",
    "AvgPool2D",
    "BatchNormalization",
    "Bidirectional",
    "Concatenate",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Convolution1D",
    "Convolution2D",
    "Convolution2DTranspose",
    "Cropping2D",
    "Dense",
    "DepthwiseConv2D",
    "Dropout",
    "EinsumDense",
    "MultiHeadAttention",
    "ELU",
    "Embedding",
    "Flatten",
    "GRU",
    "GaussianNoise",
    "GlobalAveragePooling2D",
    "GlobalMaxPool2D",
    "GlobalMaxPooling2D",
    "GlobalAvgPool2D",
    "Input",
    "InputLayer",
    "KerasTensor",
    "LSTM",
    "Lambda",
    "Layer",
    "GroupNormalization",
    "LayerNormalization",
    "LeakyReLU",
    "MaxPool2D",
    "MaxPooling2D",
    "Multiply",
    "Normalization",
    "PReLU",
    "Permute",
    "ReLU",
    "Rescaling",
    "Reshape",
    "SeparableConv2D",
    "SeparableConvolution2D",
    "Softmax",
    "SpatialDropout2D",
    "Subtract",
    "ThresholdedReLU",
    "UpSampling2D",
    "ZeroPadding2D",
    "add",
    "average",
    "concatenate",
    "multiply",
    "subtract",
]
