"""A Keras-compatible API on the ipu-teach autograd: ``import ipu_teach.keras as keras``.

Names, signatures and defaults follow Keras (TensorFlow 2.x), so the Graphcore tutorial's code
runs with only its imports changed.

Example:

>>> import ipu_teach.keras as keras
>>> keras.utils.set_random_seed(0)
>>> inputs = keras.Input(shape=(4,))
>>> model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(inputs))
>>> model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
>>> x, y = np.ones((8, 4), np.float32), keras.utils.to_categorical(np.zeros(8), 3)
>>> history = model.fit(x, y, batch_size=4, epochs=1, verbose=0)
>>> model.predict(x, verbose=0).shape
(8, 3)
"""

from . import (
    activations,
    applications,
    backend,
    callbacks,
    datasets,
    initializers,
    ipu,
    layers,
    losses,
    metrics,
    mixed_precision,
    models,
    optimizer_v2,
    optimizers,
    regularizers,
    utils,
)
from .layers import Input
from .models import Model, Sequential

__all__ = [
    "Input",
    "Model",
    "Sequential",
    "activations",
    "applications",
    "backend",
    "callbacks",
    "datasets",
    "initializers",
    "ipu",
    "layers",
    "losses",
    "metrics",
    "mixed_precision",
    "models",
    "optimizer_v2",
    "optimizers",
    "regularizers",
    "utils",
]
