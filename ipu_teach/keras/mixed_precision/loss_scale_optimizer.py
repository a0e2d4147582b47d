"""``LossScaleOptimizer`` (keras ``mixed_precision/loss_scale_optimizer.py``): scale the loss so small fp16
gradients do not underflow, unscale the gradients before the update.

Dynamic (the default): start at 2**15; when any gradient is inf or NaN, skip the step and halve the scale
(never below 1), still counting the step in ``iterations`` as Keras does (so learning-rate schedules and
Adam's step count go on); after ``dynamic_growth_steps`` (2000) finite steps in a row, double it. Static
(``dynamic=False``): a fixed ``initial_scale``, every step applied, as Keras' fixed loss scale does.
"""

from __future__ import annotations

import numpy as np

from ..engine import atomic_step
from ..optimizers import Optimizer


class LossScaleOptimizer(Optimizer):
    """An optimizer that applies loss scaling to prevent numeric underflow of fp16 gradients.

    The loss is multiplied by ``loss_scale`` before the backward pass, so small fp16 gradients do not
    underflow to zero, and the gradients are divided by it before the update. With dynamic scaling (the
    default) a step with an inf or NaN gradient is skipped and the scale halved; after
    ``dynamic_growth_steps`` finite steps in a row it doubles. Anything not about loss scaling is the
    inner optimizer's. ``compile`` wraps the optimizer in one under the ``mixed_float16`` policy, as Keras does.

    Args:
      inner_optimizer: The ``keras.optimizers.Optimizer`` instance to wrap.
      dynamic: Bool, whether to update the loss scale dynamically. Default: True.
      initial_scale: The initial loss scale (required when not dynamic). Default: None, 2**15.
      dynamic_growth_steps: With dynamic scaling, how often to double the scale. Default: None, 2000.

    Raises:
      TypeError: if ``inner_optimizer`` is not an optimizer.
      ValueError: for a static scale without ``initial_scale``, or an ``initial_scale`` below 1.

    Example:

    >>> optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1))
    >>> optimizer.loss_scale
    32768.0
    >>> weight = keras.layers.Dense(1).add_weight("w", (1,), initializer="ones")
    >>> optimizer.apply_gradients([(np.array([np.inf], np.float32), weight)])   # skipped
    False
    >>> optimizer.loss_scale, weight.data
    (16384.0, array([1.], dtype=float32))
    """

    slots_per_weight = property(lambda self: self.inner_optimizer.slots_per_weight)
    update_flops_per_weight = property(lambda self: self.inner_optimizer.update_flops_per_weight)

    def __init__(self, inner_optimizer, dynamic=True, initial_scale=None, dynamic_growth_steps=None):
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer: 'inner_optimizer' must be an instance of keras.optimizers.Optimizer, "
                f"but got: {inner_optimizer!r}"
            )
        if not dynamic and initial_scale is None:
            raise ValueError('LossScaleOptimizer: "initial_scale" must be specified if "dynamic" is False')
        if not dynamic and dynamic_growth_steps is not None:
            raise ValueError(
                'LossScaleOptimizer: "dynamic_growth_steps" must be None if "dynamic" is False, '
                f"but got: {dynamic_growth_steps}"
            )
        scale = 2.0**15 if initial_scale is None else float(initial_scale)
        if not scale >= 1:
            raise ValueError(f"LossScaleOptimizer: initial_scale must be >= 1, got {initial_scale!r}")
        self.inner_optimizer = inner_optimizer
        self.dynamic = bool(dynamic)
        self.initial_scale = scale
        self.dynamic_growth_steps = (
            (2000 if dynamic_growth_steps is None else int(dynamic_growth_steps)) if dynamic else None
        )
        self.loss_scale = scale
        self.dynamic_counter = 0

    def __getattr__(self, name):  # iterations, name, slots... are the inner optimizer's
        if name == "inner_optimizer":
            raise AttributeError(name)
        return getattr(self.inner_optimizer, name)

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    def get_scaled_loss(self, loss):
        return loss * self.loss_scale

    def get_unscaled_gradients(self, grads) -> list:
        return [None if g is None else g * (1.0 / self.loss_scale) for g in grads]

    def apply_gradients(self, grads_and_vars) -> bool:
        """Applies the (unscaled) gradients unless one is not finite, and updates the loss scale.

        With dynamic scaling, a step with an inf or NaN gradient is skipped and halves the scale (never
        below 1); ``dynamic_growth_steps`` applied steps in a row double it. A static scale applies every step.

        Args:
          grads_and_vars: List of ``(gradient, weight)`` pairs, the gradients already unscaled.

        Returns:
          True when the gradients were applied, False when the step was skipped.

        Example:

        >>> optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1),
        ...                                                      dynamic_growth_steps=2)
        >>> weight = keras.layers.Dense(1).add_weight("w", (1,), initializer="ones")
        >>> [optimizer.apply_gradients([(np.array([g], np.float32), weight)]) for g in (np.nan, 1.0, 1.0)]
        [False, True, True]
        >>> optimizer.loss_scale, round(float(weight.data[0]), 2)
        (32768.0, 0.8)
        """
        grads_and_vars = list(grads_and_vars)
        if not self.dynamic:
            self.inner_optimizer.apply_gradients(grads_and_vars)
            return True
        return atomic_step.run(self._dynamic_step, grads_and_vars)  # the scale changes with its step, or not at all

    def _dynamic_step(self, grads_and_vars) -> bool:
        if not all(np.isfinite(g).all() for g, _ in grads_and_vars if g is not None):
            atomic_step.assign_all(
                [
                    (self, "loss_scale", max(self.loss_scale / 2, 1.0)),
                    (self, "dynamic_counter", 0),
                    (self.inner_optimizer, "iterations", self.inner_optimizer.iterations + 1),
                ]
            )
            return False
        self.inner_optimizer.apply_gradients(grads_and_vars)
        grown = self.dynamic_counter + 1 == self.dynamic_growth_steps
        atomic_step.assign_all(
            [
                (self, "loss_scale", self.loss_scale * 2 if grown else self.loss_scale),
                (self, "dynamic_counter", 0 if grown else self.dynamic_counter + 1),
            ]
        )
        return True

    def get_config(self) -> dict:
        return {
            "inner_optimizer": self.inner_optimizer.get_config(),
            "dynamic": self.dynamic,
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }
