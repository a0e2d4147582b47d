# Exercise 1 (solution): time per step = overhead / N + device time per step. One executable gives
# the device time per step; then the formula predicts any N. The host overhead is below 10% of the
# step when overhead / N < 0.1 * (overhead / N + device step), i.e. N > 9 * overhead / device step.
import contextlib
import io
import math

import numpy as np

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn
from ipu_teach import hardware, ipu


model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook


steps = 32
x = np.zeros((steps * 64, 28, 28, 1), np.float32)  # a compile-only run: the values do not matter
y = np.zeros((steps * 64, 10), np.float32)
config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
config.configure_ipu_system()
with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
    model = keras.Model(*model_fn())
    model.compile("sgd", "categorical_crossentropy", steps_per_execution=steps)
    model.fit(x, y, epochs=1, batch_size=64)

overhead = hardware.HOST.execution_overhead_s
device_step = (model.get_ipu_executable("train").seconds_per_execution - overhead) / steps
full_epoch = 60_000 // 64
predicted = overhead / full_epoch + device_step
smallest = math.floor(9 * overhead / device_step) + 1
print(f"device time per step: {device_step * 1e6:.1f} us (simulated)")
print(
    f"full MNIST epoch per execution (N = {full_epoch}): {predicted * 1e6:.1f} us/step, "
    f"host overhead {overhead / full_epoch / predicted:.0%}"
)
print(f"host overhead below 10% from N = {smallest} steps per execution")
