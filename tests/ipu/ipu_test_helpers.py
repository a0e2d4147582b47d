"""Small models, data and runners shared by the IPU tests: the same model trained on the CPU and on
the simulated IPU, from the same seed, so their weights can be compared."""

import re

import numpy as np
from helpers.models import LEARNING_RATE, compile_model

import ipu_teach.keras as keras
from ipu_teach import ipu

FEATURES, CLASSES = 6, 3


def data(n=256, seed=1):
    """``n`` float32 samples of a 3-class problem a tiny model can learn."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5).astype(int)
    return x, keras.utils.to_categorical(labels, CLASSES)


def build(seed=0, hidden=8, new_session=True):
    """A dropout-free Dense model with weights drawn from ``seed``; layer names restart, as in a new
    session, unless ``new_session`` is False."""
    if new_session:
        keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(FEATURES,))
    x = keras.layers.Dense(hidden, activation="relu")(inputs)
    outputs = keras.layers.Dense(CLASSES, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def configure(num_ipus=1, **ipu_model):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = num_ipus
    for name, value in ipu_model.items():
        setattr(config.ipu_model, name, value)
    config.configure_ipu_system()
    return config


def cpu_model(seed=0, learning_rate=LEARNING_RATE, **kwargs):
    return compile_model(build(seed, **kwargs), learning_rate=learning_rate)


def ipu_model(steps_per_execution=1, accumulation=None, seed=0, reduction="sum", **kwargs):
    """A model compiled inside an IPUStrategy scope (the system must already be configured);
    ``reduction`` is the gradient_accumulation_reduction_method (Graphcore's default: 'sum')."""
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build(seed, **kwargs)
        if accumulation:
            model.set_gradient_accumulation_options(
                gradient_accumulation_steps_per_replica=accumulation, gradient_accumulation_reduction_method=reduction
            )
        return compile_model(model, steps_per_execution)


def fit(model, x, y, batch_size, epochs=1, shuffle=False, seed=3):
    """``fit`` with the shuffling generator seeded, so CPU and IPU see the same order."""
    keras.utils.set_random_seed(seed)
    return model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=shuffle, verbose=0)


def assert_same_weights(a, b, rtol=1e-5, atol=1e-6):
    for wa, wb in zip(a.get_weights(), b.get_weights(), strict=True):
        np.testing.assert_allclose(wa, wb, rtol=rtol, atol=atol)


_PROGRESS = re.compile(r"(\d+)/(\d+) \[=+\] - (\d+)s (\d+)(us|ms|s)/step( \(simulated\))?")
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def progress_lines(text):
    """(steps, total seconds, seconds per step, labelled simulated) of each finished progress line."""
    return [(int(m[1]), int(m[3]), int(m[4]) * _UNIT[m[5]], bool(m[6])) for m in _PROGRESS.finditer(text)]


def lines_with(text, fragment):
    return [line for line in text.splitlines() if fragment in line]
