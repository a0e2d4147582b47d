"""Tiny models and data shared by the Keras tests (kept small so the suite runs in seconds)."""
import numpy as np

import ipu_teach.keras as keras


def tiny_classification(n=50, features=4, classes=3, seed=1):
    """Separable-ish toy data: x (n, features) float32, integer labels (n,)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = (x[:, 0] * 2 + x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 1).astype(np.int64)
    return x, y % classes


def tiny_dense_model(features=4, classes=3, activation="softmax"):
    inputs = keras.Input(shape=(features,))
    outputs = keras.layers.Dense(classes, activation=activation)(keras.layers.Dense(8, activation="relu")(inputs))
    return keras.Model(inputs, outputs)


def tiny_cnn(classes=3, dropout=None):
    """The tutorial's CNN shape on 8x8 images: conv, pool, flatten, (dropout), dense softmax."""
    inputs = keras.Input(shape=(8, 8, 1))
    x = keras.layers.Conv2D(4, kernel_size=(3, 3), activation="relu")(inputs)
    x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Flatten()(x)
    if dropout:
        x = keras.layers.Dropout(dropout)(x)
    return keras.Model(inputs, keras.layers.Dense(classes, activation="softmax")(x))
