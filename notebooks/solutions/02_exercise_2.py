# Exercise 2 (solution): evaluate on 40 batches. 8 divides 40: it runs. 16 does not divide 40: an
# error that lists divisors. 40 is one execution for the whole test set. 64 is more than 40: it is
# truncated to 40 with a warning and runs.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn
from ipu_teach import ipu


model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook


x_test = np.zeros((2_560, 28, 28, 1), np.float32)  # the bundled test set's shape: 40 batches of 64
y_test = np.zeros((2_560, 10), np.float32)
config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE  # compile only: quick
config.configure_ipu_system()

outcomes = {}
with ipu.ipu_strategy.IPUStrategy().scope():
    model = keras.Model(*model_fn())
    for steps_per_execution in (8, 16, 40, 64):
        model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=steps_per_execution)
        log = io.StringIO()
        try:
            with contextlib.redirect_stdout(log):
                model.evaluate(x_test, y_test, batch_size=64, verbose=0)
        except ipu.IPURuleError as error:
            outcomes[steps_per_execution] = f"error: {error}"
        else:
            truncated = "will be truncated" in log.getvalue()
            outcomes[steps_per_execution] = "runs, truncated to 40 with a warning" if truncated else "runs"
        print(f"steps_per_execution={steps_per_execution:>2}: {outcomes[steps_per_execution]}")
