# Exercise 4 (solution): the step of the tutorial's model with 8 to 512 I/O tiles. Few I/O tiles hide
# the host transfers too, but each must then send a large share of the batch in the on-chip copy to
# the compute tiles (its exchange is slow); many I/O tiles leave fewer tiles to compute. The best
# count sits in between: Graphcore's advice is to experiment, as here.
# The notebook's IPU runs again afterwards, and its names are left alone.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

SAMPLES, BATCH = 8_192, 64
zero_images = np.zeros((SAMPLES, 28, 28, 1), np.float32)
zero_labels = np.zeros((SAMPLES, 10), np.float32)


def device_step_us(num_io_tiles):
    """Simulated device microseconds per step with ``num_io_tiles`` I/O tiles (0: none), compiled only."""
    io_config = ipu.config.IPUConfig()
    io_config.auto_select_ipus = 1
    io_config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    if num_io_tiles:
        io_config.io_tiles.num_io_tiles = num_io_tiles
        io_config.io_tiles.place_ops_on_io_tiles = True
    io_config.configure_ipu_system()
    epoch_steps = SAMPLES // BATCH
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        io_model = keras.Model(*tutorial_model_fn())
        io_model.compile("sgd", "categorical_crossentropy", steps_per_execution=epoch_steps)
        io_model.fit(zero_images, zero_labels, epochs=1, batch_size=BATCH)
    return io_model.get_ipu_executable("train").timeline.seconds() / epoch_steps * 1e6


with ipu.system.restored_afterwards():
    step_us = {io_tiles: device_step_us(io_tiles) for io_tiles in (0, 8, 32, 128, 512)}
print(f"{'I/O tiles':>10} {'us per step (simulated)':>24}")
for io_tiles, micros in step_us.items():
    print(f"{io_tiles:>10} {micros:>24.1f}")
best = min(step_us, key=step_us.get)
print(f"fastest: {best} I/O tiles, {step_us[0] / step_us[best]:.2f}x the step without I/O tiles")
