# Exercise 3 (solution): the host overhead is paid per execution, whatever the batch size, so with
# one step per execution small batches suffer most (batch 16 reaches a fraction of batch 256's rate).
# With a whole epoch per execution the overhead is spread over many steps and all batch sizes speed up.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn
from ipu_teach import ipu


model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook


SAMPLES = 8_192
x = np.zeros((SAMPLES, 28, 28, 1), np.float32)
y = np.zeros((SAMPLES, 10), np.float32)
config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
config.configure_ipu_system()


def images_per_second(batch_size, steps_per_execution):
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        model = keras.Model(*model_fn())
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=steps_per_execution)
        model.fit(x, y, epochs=1, batch_size=batch_size)
    return steps_per_execution * batch_size / model.get_ipu_executable("train").seconds_per_execution


rates = {}
print(f"{'batch':>6} {'N = 1':>14} {'N = epoch':>14}   images/s (simulated)")
for batch_size in (16, 64, 256):
    rates[batch_size] = (images_per_second(batch_size, 1), images_per_second(batch_size, SAMPLES // batch_size))
    print(f"{batch_size:>6} {rates[batch_size][0]:>14,.0f} {rates[batch_size][1]:>14,.0f}")
