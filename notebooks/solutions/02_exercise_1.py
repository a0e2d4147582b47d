# Exercise 1 (solution): time per step = overhead / N + device time per step. One executable gives
# the device time per step; then the formula predicts any N. The host overhead is below 10% of the
# step when overhead / N < 0.1 * (overhead / N + device step), i.e. N > 9 * overhead / device step.
# The notebook's IPU runs again afterwards, and its names are left alone.
import contextlib
import io
import math

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

measured_steps = 32
zero_images = np.zeros((measured_steps * 64, 28, 28, 1), np.float32)   # a compile-only run: values do not matter
zero_labels = np.zeros((measured_steps * 64, 10), np.float32)
with ipu.system.restored_afterwards():
    compile_only = ipu.config.IPUConfig()
    compile_only.auto_select_ipus = 1
    compile_only.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    compile_only.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        measured_model = keras.Model(*tutorial_model_fn())
        measured_model.compile("sgd", "categorical_crossentropy", steps_per_execution=measured_steps)
        measured_model.fit(zero_images, zero_labels, epochs=1, batch_size=64)

host_overhead = hardware.HOST.execution_overhead_s
seconds_per_execution = measured_model.get_ipu_executable("train").seconds_per_execution
device_seconds_per_step = (seconds_per_execution - host_overhead) / measured_steps
full_epoch = 60_000 // 64
predicted = host_overhead / full_epoch + device_seconds_per_step
smallest = math.floor(9 * host_overhead / device_seconds_per_step) + 1
print(f"device time per step: {device_seconds_per_step * 1e6:.1f} us (simulated)")
print(f"full MNIST epoch per execution (N = {full_epoch}): {predicted * 1e6:.1f} us/step, "
      f"host overhead {host_overhead / full_epoch / predicted:.0%}")
print(f"host overhead below 10% from N = {smallest} steps per execution")
