# Predict, then check: the dynamic loss scale after 3 overflowing steps, then 5 good steps with growth every 4.
import numpy as np

import ipu_teach.keras as keras

optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.01), dynamic_growth_steps=4)
weight = keras.layers.Dense(1).add_weight("w", (1,), initializer="ones")
history = [optimizer.loss_scale]
for gradient in [np.inf] * 3 + [0.5] * 5:
    optimizer.apply_gradients([(np.array([gradient], np.float32), weight)])
    history.append(optimizer.loss_scale)
print("loss scale:", [int(s) for s in history])
print("weight after the 5 good steps:", round(float(weight.data[0]), 4))
# 32768 halves three times to 4096 (those steps are skipped), and doubles once after 4 good steps: 8192.
