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
# With Poplar's default float partials, fp16 runs on 8 conv units where fp32 runs on 16 (poplibs getNumConvUnits),
# each taking 16 input channels instead of 8, a position in half the worker cycles: 2x the fp32 rate at best. The
# first convolution has 1 input channel: fp32 makes its 32 output channels in 2 passes a kernel position, fp16 in 4
# shorter ones, so it gains nothing (1.01x). The second (32 channels) gains 1.53x, less than the AMP's 2x: each
# pass's fixed costs (loading the weights, each worker's start) do not shrink in fp16, and its tiles hold few
# positions. Half partials double the conv units (16 output channels a pass): 2.66x, still short of the 4x of
# Graphcore's 250 TFLOPS for the same reason, and even the thin first one gains (1.38x).
