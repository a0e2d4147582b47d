"""The Graphcore Keras tutorial's MNIST model, for the tour, the exercise solutions and the benchmarks.

The notebooks write it out in full (that is the lesson); everything else builds it from here.
"""
import contextlib


def tutorial_model_fn(stages: bool = False, hidden: int = None, num_classes: int = 10):
    """``(input_layer, output)`` of the tutorial's CNN, as its ``model_fn`` returns them; with ``stages``
    split over two pipeline stages where the tutorial splits it; ``hidden`` adds a Dense layer of that size."""
    from . import keras
    stage0 = keras.ipu.PipelineStage(0) if stages else contextlib.nullcontext()
    stage1 = keras.ipu.PipelineStage(1) if stages else contextlib.nullcontext()
    input_layer = keras.Input(shape=(28, 28, 1))
    with stage0:
        x = keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu")(input_layer)
        x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
        x = keras.layers.Conv2D(64, kernel_size=(3, 3), activation="relu")(x)
    with stage1:
        x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
        x = keras.layers.Flatten()(x)
        x = keras.layers.Dropout(0.5)(x)
        if hidden:
            x = keras.layers.Dense(hidden, activation="relu")(x)
        x = keras.layers.Dense(num_classes, activation="softmax")(x)
    return input_layer, x
