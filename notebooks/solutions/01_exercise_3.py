# Exercise 3 (solution): compile time grows with the graph. A Dense(128, relu) layer adds its forward
# ops (MatMul, Add, ReLU), their backward ops and its weights' updates; a matrix product lowers to
# several compute sets (rearranging its operands, the product, adding up partial sums), so the layer
# has 21 compute sets of its own; the output layer's product now adds up 128 inputs instead of 1,600 and needs
# 2 fewer stages to add up its partial sums: 19 more in all (105 -> 124). Compile time grows with the graph's
# size (ipu_teach/ipu/compile_time.py): each compute set costs the vertices and exchange code of the tiles
# working in it and every tile's control code: 3.7 s more compilation (31.1 -> 34.8 s, simulated).
# The notebook's IPU runs again afterwards, and its names are left alone.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn   # the tutorial's model, with an optional hidden layer

data_rng = np.random.default_rng(0)
any_images = data_rng.random((64, 28, 28, 1), dtype=np.float32)
any_labels = keras.utils.to_categorical(data_rng.integers(0, 10, 64), 10)

compiled, models = {}, {}
with ipu.system.restored_afterwards():
    compile_only = ipu.config.IPUConfig()
    compile_only.auto_select_ipus = 1
    compile_only.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE   # compile only
    compile_only.configure_ipu_system()
    for hidden in (None, 128):
        with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
            models[hidden] = keras.Model(*tutorial_model_fn(hidden=hidden))
            models[hidden].compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
            models[hidden].fit(any_images, any_labels, epochs=1, batch_size=64)
        compiled[hidden] = models[hidden].get_ipu_executable("train")
        print(f"hidden layer {hidden!s:>4}: {compiled[hidden].graph.compute_sets} compute sets, "
              f"compile {compiled[hidden].compile_seconds:.1f} s (simulated)")
added = compiled[128].graph.compute_sets - compiled[None].graph.compute_sets
print(f"the hidden layer adds {added} compute sets and "
      f"{compiled[128].compile_seconds - compiled[None].compile_seconds:.1f} s of compilation")
