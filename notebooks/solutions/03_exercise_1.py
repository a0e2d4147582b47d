# Exercise 1 (solution): the all-reduce moves the gradients (fixed by the weights, not the batch)
# every step, while the compute grows with the batch. With 256 images per replica the all-reduce is
# a smaller part of each step, so replication pays off better than with 64.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn
from ipu_teach import ipu


model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook


def simulated_step_seconds(replicas, samples=16_384, batch_size=64):
    """Simulated seconds per step (one batch on every replica), a whole epoch per execution."""
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = replicas
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()
    steps = samples // (batch_size * replicas)
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        model = keras.Model(*model_fn())
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=steps)
        model.fit(
            np.zeros((samples, 28, 28, 1), np.float32),
            np.zeros((samples, 10), np.float32),
            epochs=1,
            batch_size=batch_size,
        )
    return model.get_ipu_executable("train").seconds_per_execution / steps


speed_up, efficiency = {}, {}
for batch_size in (64, 256):
    rate = {r: r * batch_size / simulated_step_seconds(r, batch_size=batch_size) for r in (1, 2, 8)}
    speed_up[batch_size] = rate[2] / rate[1]
    efficiency[batch_size] = rate[8] / rate[1] / 8
    print(
        f"batch {batch_size:>3} per replica: 2 replicas {speed_up[batch_size]:.2f}x, "
        f"8 replicas at {efficiency[batch_size]:.0%} efficiency (simulated)"
    )
