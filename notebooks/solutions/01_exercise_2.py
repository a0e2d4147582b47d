# Exercise 2 (solution): what forces a recompile. PRE_COMPILE compiles each program (and stores it
# in the executable cache) without running it. A new but identical model loads from the cache, and so
# does a new learning rate: hyperparameters are variables the program reads, not part of the program.
# A new batch size or another optimizer (Adam keeps two more values per weight) is a different program.
import contextlib
import io
import shutil
import tempfile

import numpy as np

import ipu_teach.keras as keras
from ipu_teach.examples import tutorial_model_fn
from ipu_teach import ipu


model_fn = tutorial_model_fn  # the tutorial's model_fn, as written out in the notebook


rng = np.random.default_rng(0)
x = rng.random((128, 28, 28, 1), dtype=np.float32)  # any data of the right shape will do
y = keras.utils.to_categorical(rng.integers(0, 10, 128), 10)

config = ipu.config.IPUConfig()
config.auto_select_ipus = 1
config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
config.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()

cache = tempfile.mkdtemp()
ipu.executable_cache.enable(cache)
variants = [
    ("batch 64", 64, "sgd"),
    ("batch 64 again, new model", 64, "sgd"),
    ("batch 32", 32, "sgd"),
    ("batch 64, learning rate 0.1", 64, keras.optimizers.SGD(learning_rate=0.1)),
    ("batch 64, Adam", 64, "adam"),
]
loaded = {}
for name, batch_size, optimizer in variants:
    with strategy.scope(), contextlib.redirect_stdout(io.StringIO()):  # hide the INFO lines
        model = keras.Model(*model_fn())
        model.compile(optimizer, "categorical_crossentropy", metrics=["accuracy"])
        model.fit(x, y, epochs=1, batch_size=batch_size)
    loaded[name] = model.get_ipu_executable("train").from_cache
    print(f"{name:<30} {'loaded from the cache' if loaded[name] else 'compiled'}")
ipu.executable_cache.disable()
shutil.rmtree(cache)
