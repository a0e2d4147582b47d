# Exercise 4 (solution): the step of the tutorial's model with 8 to 512 I/O tiles. Few I/O tiles hide
# the host transfers too, but each must then send a large share of the batch in the on-chip copy to
# the compute tiles (its exchange is slow); many I/O tiles leave fewer tiles to compute. The best
# count sits in between: Graphcore's advice is to experiment, as here.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn

model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook

SAMPLES, BATCH = 8_192, 64
x = np.zeros((SAMPLES, 28, 28, 1), np.float32)
y = np.zeros((SAMPLES, 10), np.float32)


def device_step_us(num_io_tiles):
    """Simulated device microseconds per step with ``num_io_tiles`` I/O tiles (0: none), compiled only."""
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    if num_io_tiles:
        config.io_tiles.num_io_tiles = num_io_tiles
        config.io_tiles.place_ops_on_io_tiles = True
    config.configure_ipu_system()
    steps = SAMPLES // BATCH
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        model = keras.Model(*model_fn())
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=steps)
        model.fit(x, y, epochs=1, batch_size=BATCH)
    return model.get_ipu_executable("train").timeline.seconds() / steps * 1e6


step_us = {n: device_step_us(n) for n in (0, 8, 32, 128, 512)}
print(f"{'I/O tiles':>10} {'us per step (simulated)':>24}")
for n, us in step_us.items():
    print(f"{n:>10} {us:>24.1f}")
best = min(step_us, key=step_us.get)
print(f"fastest: {best} I/O tiles, {step_us[0] / step_us[best]:.2f}x the step without I/O tiles")
