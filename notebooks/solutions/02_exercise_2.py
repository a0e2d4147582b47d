# Exercise 2 (solution): evaluate on 40 batches. 8 divides 40: it runs. 16 does not divide 40: an
# error that lists divisors. 40 is one execution for the whole test set. 64 is more than 40: it is
# truncated to 40 with a warning and runs.
# The notebook's IPU runs again afterwards, and its names (x_test, model...) are left alone.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

test_images = np.zeros((2_560, 28, 28, 1), np.float32)       # the bundled test set's shape: 40 batches of 64
test_labels = np.zeros((2_560, 10), np.float32)

outcomes = {}
with ipu.system.restored_afterwards():
    compile_only = ipu.config.IPUConfig()
    compile_only.auto_select_ipus = 1
    compile_only.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE   # compile only: quick
    compile_only.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        evaluated = keras.Model(*tutorial_model_fn())
        for tried in (8, 16, 40, 64):
            evaluated.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=tried)
            log = io.StringIO()
            try:
                with contextlib.redirect_stdout(log):
                    evaluated.evaluate(test_images, test_labels, batch_size=64, verbose=0)
            except ipu.IPURuleError as error:
                outcomes[tried] = f"error: {error}"
            else:
                truncated = "will be truncated" in log.getvalue()
                outcomes[tried] = "runs, truncated to 40 with a warning" if truncated else "runs"
            print(f"steps_per_execution={tried:>2}: {outcomes[tried]}")
