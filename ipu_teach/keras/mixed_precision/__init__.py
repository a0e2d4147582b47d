"""``keras.mixed_precision``: dtype policies and loss scaling, with Keras' names and semantics.

``set_global_policy('mixed_float16')`` makes the layers created afterwards compute in fp16 while keeping
their variables in fp32; ``'float16'`` keeps the variables in fp16 too. A model whose policy computes in
fp16 is compiled with its optimizer wrapped in a ``LossScaleOptimizer``, as Keras does.

Example:

>>> keras.mixed_precision.set_global_policy("mixed_float16")
>>> model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
>>> model.compile("sgd", "mse")
>>> type(model.optimizer).__name__, model.layers[0].compute_dtype
('LossScaleOptimizer', 'float16')
>>> keras.mixed_precision.set_global_policy("float32")
"""

from .loss_scale_optimizer import LossScaleOptimizer
from .policy import Policy, global_policy, set_global_policy

__all__ = ["LossScaleOptimizer", "Policy", "global_policy", "set_global_policy"]
