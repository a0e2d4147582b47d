"""How the Keras tests on the simulated IPU compile their small classifiers: plain SGD on categorical
cross-entropy with accuracy, so the IPU tests and the pipelining tests compare like with like."""

import ipu_teach.keras as keras

LEARNING_RATE = 0.1  # large enough that a different batching would move the weights visibly


def compile_model(model, steps_per_execution=1, learning_rate=LEARNING_RATE):
    """``model`` compiled with SGD(``learning_rate``), categorical cross-entropy and accuracy; returns it."""
    model.compile(
        keras.optimizers.SGD(learning_rate),
        "categorical_crossentropy",
        metrics=["accuracy"],
        steps_per_execution=steps_per_execution,
    )
    return model
