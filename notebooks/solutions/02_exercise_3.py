# Exercise 3 (solution): the host overhead is paid per execution, whatever the batch size, so with
# one step per execution small batches suffer most (batch 16 reaches a fraction of batch 256's rate).
# With a whole epoch per execution the overhead is spread over many steps and all batch sizes speed up.
# The notebook's IPU runs again afterwards, and its names (batch_size...) are left alone.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

SAMPLES = 8_192
zero_images = np.zeros((SAMPLES, 28, 28, 1), np.float32)
zero_labels = np.zeros((SAMPLES, 10), np.float32)


def images_per_second(batch, steps_per_execution):
    """Simulated images per second of the tutorial's model, from a compile-only run."""
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        rate_model = keras.Model(*tutorial_model_fn())
        rate_model.compile("sgd", "categorical_crossentropy", steps_per_execution=steps_per_execution)
        rate_model.fit(zero_images, zero_labels, epochs=1, batch_size=batch)
    return steps_per_execution * batch / rate_model.get_ipu_executable("train").seconds_per_execution


rates = {}
with ipu.system.restored_afterwards():
    compile_only = ipu.config.IPUConfig()
    compile_only.auto_select_ipus = 1
    compile_only.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    compile_only.configure_ipu_system()
    print(f"{'batch':>6} {'N = 1':>14} {'N = epoch':>14}   images/s (simulated)")
    for batch in (16, 64, 256):
        rates[batch] = (images_per_second(batch, 1), images_per_second(batch, SAMPLES // batch))
        print(f"{batch:>6} {rates[batch][0]:>14,.0f} {rates[batch][1]:>14,.0f}")
