"""Small models on a 16-tile simulated IPU, so every report is built in milliseconds."""

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu

TILES = 16


def configure(tiles=TILES, replicas=1, **profiling_options):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = replicas
    config.ipu_model.tiles_per_ipu = tiles
    for name, value in profiling_options.items():
        setattr(config.profiling, name, value)
    config.configure_ipu_system()


def small_cnn():
    inputs = keras.Input(shape=(8, 8, 1))
    x = keras.layers.Conv2D(4, (3, 3), activation="relu")(inputs)
    x = keras.layers.MaxPooling2D((2, 2))(x)
    x = keras.layers.Flatten()(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def data(samples=32, shape=(8, 8, 1), classes=3):
    rng = np.random.default_rng(0)
    return rng.random((samples,) + shape, dtype=np.float32), keras.utils.to_categorical(
        np.arange(samples) % classes, classes
    )


def fit(model_fn=small_cnn, batch_size=8, samples=32, steps_per_execution=2, **fit_options):
    """Compile and fit a fresh model in an IPUStrategy; return the model."""
    x, y = data(samples)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = model_fn()
        model.compile(loss="categorical_crossentropy", optimizer="sgd", steps_per_execution=steps_per_execution)
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0, **fit_options)
    return model


def wide_mlp():
    """Two 512-wide layers: at a batch of thousands their activations overflow 16 tiles."""
    inputs = keras.Input(shape=(8, 8, 1))
    x = keras.layers.Flatten()(inputs)
    x = keras.layers.Dense(512, activation="relu")(x)
    outputs = keras.layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def pipelined_cnn():
    """The small CNN in two pipeline stages (one IPU each)."""
    inputs = keras.Input(shape=(8, 8, 1))
    with keras.ipu.PipelineStage(0):
        x = keras.layers.Conv2D(4, (3, 3), activation="relu")(inputs)
        x = keras.layers.MaxPooling2D((2, 2))(x)
    with keras.ipu.PipelineStage(1):
        x = keras.layers.Flatten()(x)
        outputs = keras.layers.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)
