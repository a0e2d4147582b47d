# Predict, then check: does the tutorial's first convolution (1 input channel) get 4x faster in fp16?
import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn


def first_conv_cycles(policy, partials="float"):
    """Cycles of each convolution's forward product under ``policy`` (the notebook's policy is back afterwards)."""
    policy_before = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(policy)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.convolutions.poplar_options = {"partialsType": partials}
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn())
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=1)
        x = np.zeros((64, 28, 28, 1), np.float32)
        y = keras.utils.to_categorical(np.zeros(64), 10)
        model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    keras.mixed_precision.set_global_policy(policy_before)
    steps = model.get_ipu_executable("train").graph.forward
    return {name: int(next(s for s in steps if s.name.startswith(name) and s.name.count("/") == 1).cycles.max())
            for name in ("conv2d/Conv2D", "conv2d_1/Conv2D")}


with ipu.system.restored_afterwards():                  # the notebook's IPU configuration is back afterwards
    conv_fp32, conv_fp16 = first_conv_cycles("float32"), first_conv_cycles("mixed_float16")
    conv_half = first_conv_cycles("mixed_float16", partials="half")
for layer in conv_fp32:
    print(f"{layer:16} fp32 {conv_fp32[layer]:>6,} cycles   fp16 {conv_fp16[layer]:>6,} cycles   "
          f"speed-up {conv_fp32[layer] / conv_fp16[layer]:.2f}x   "
          f"fp16, half partials {conv_half[layer]:>6,} cycles   speed-up {conv_fp32[layer] / conv_half[layer]:.2f}x")
# With Poplar's default float partials, fp16 runs on the same 8 conv units as fp32 (poplibs getNumConvUnits), each
# pass taking 16 input channels instead of 8. The first convolution has 1 input channel: one pass per kernel
# position either way, so it gains nothing (1.00x); the second (32 channels) needs half the passes, and its operands
# exchange half the bytes: 2.39x, a little over the AMP's 2x. Half partials double the conv units (16 output
# channels a pass): only then does the second convolution reach about the 4x of Graphcore's 250 TFLOPS (3.95x),
# and even the thin first one gains (1.37x).
