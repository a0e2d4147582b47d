# Predict, then check: the dynamic loss scale after 3 overflowing steps, then 5 good steps with growth every 4.
import numpy as np

import ipu_teach.keras as keras

# (The names are the solution's own: the notebook's `optimizer` and `weight` are left alone.)
growing_optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.01), dynamic_growth_steps=4)
one_weight = keras.layers.Dense(1).add_weight("w", (1,), initializer="ones")
scale_history = [growing_optimizer.loss_scale]
for step_gradient in [np.inf] * 3 + [0.5] * 5:
    growing_optimizer.apply_gradients([(np.array([step_gradient], np.float32), one_weight)])
    scale_history.append(growing_optimizer.loss_scale)
print("loss scale:", [int(s) for s in scale_history])
print("weight after the 5 good steps:", round(float(one_weight.data[0]), 4))
# 32768 halves three times to 4096 (those steps are skipped), and doubles once after 4 good steps: 8192.
