# Exercise 2 (solution): what forces a recompile. PRE_COMPILE compiles each program (and stores it
# in the executable cache) without running it. A new but identical model loads from the cache, and so
# does a new learning rate: hyperparameters are variables the program reads, not part of the program.
# A new batch size or another optimizer (Adam keeps two more values per weight) is a different program.
# The notebook's IPUs and executable cache are as they were afterwards, and its names are left alone.
import contextlib
import io
import shutil
import tempfile

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model_fn, as written out in the notebook

data_rng = np.random.default_rng(0)
any_images = data_rng.random((128, 28, 28, 1), dtype=np.float32)     # any data of the right shape will do
any_labels = keras.utils.to_categorical(data_rng.integers(0, 10, 128), 10)

variants = [("batch 64", 64, "sgd"), ("batch 64 again, new model", 64, "sgd"), ("batch 32", 32, "sgd"),
            ("batch 64, learning rate 0.1", 64, keras.optimizers.SGD(learning_rate=0.1)),
            ("batch 64, Adam", 64, "adam")]
loaded = {}
cache_before = ipu.executable_cache.cache_path()
cache_folder = tempfile.mkdtemp()
with ipu.system.restored_afterwards():                    # the notebook's IPU runs again afterwards
    compile_only = ipu.config.IPUConfig()
    compile_only.auto_select_ipus = 1
    compile_only.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    compile_only.configure_ipu_system()
    ipu.executable_cache.enable(cache_folder)
    for variant, variant_batch, optimizer in variants:
        with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):  # hide the INFO lines
            variant_model = keras.Model(*tutorial_model_fn())
            variant_model.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
            variant_model.fit(any_images, any_labels, epochs=1, batch_size=variant_batch)
        loaded[variant] = variant_model.get_ipu_executable("train").from_cache
        print(f"{variant:<30} {'loaded from the cache' if loaded[variant] else 'compiled'}")
if cache_before is None:
    ipu.executable_cache.disable()
else:
    ipu.executable_cache.enable(cache_before)
shutil.rmtree(cache_folder)
