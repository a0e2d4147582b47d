"""The Graphcore Keras tutorial's MNIST model, for the tour, the exercise solutions and the benchmarks.

The notebooks write it out in full (that is the lesson); everything else builds it from here.

Example:

>>> from ipu_teach.examples import tutorial_model_fn
>>> model = keras.Model(*tutorial_model_fn(stages=True))
>>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
[0, 0, 0, 1, 1, 1, 1]
"""
import contextlib


def tutorial_model_fn(stages: bool = False, hidden: int = None, num_classes: int = 10):
    """Returns ``(input_layer, output)`` of the Graphcore Keras tutorial's MNIST CNN, as its ``model_fn`` does.

    Two Conv2D / MaxPooling2D pairs, Flatten, Dropout(0.5) and a softmax Dense: the model every notebook
    ports, so exercise solutions can build it in one line (``keras.Model(*tutorial_model_fn())``).

    Args:
      stages: Boolean, split the model over two pipeline stages where the tutorial splits it. Default: False.
      hidden: Integer or None, the size of a Dense(relu) layer added before the output. Default: None.
      num_classes: Integer, the number of classes of the output. Default: 10.

    Returns:
      The tuple ``(input_layer, output)`` of symbolic tensors.

    Example:

    >>> from ipu_teach.examples import tutorial_model_fn
    >>> model = keras.Model(*tutorial_model_fn())
    >>> model.output_shape, model.count_params()
    ((None, 10), 34826)
    """
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
