"""Optimizers with Keras' update rules and defaults (SGD 0.01, Adam and RMSprop 0.001).

Each optimizer declares its cost on the IPU, which the IPU model reads and nothing else decides:
``slots_per_weight``, how many extra copies of each weight it keeps (momentum, moments), counted as
optimizer state in tile memory; ``update_flops_per_weight``, the arithmetic of one update per weight
(one FLOP per multiply, add, square root or division; per-step scalars such as Adam's bias
correction are not per weight), charged to the weight-update compute sets. A subclass that does not
declare both is refused when it is defined. To add an optimizer, write its class here: ``get`` and
``load_model`` find it by name. Its ``update(weight, value, grad)`` returns the weight's next value and keeps
state in ``self.slot(weight, i)``; the base class writes nothing until every weight's new value is computed,
so that a step interrupted by Ctrl-C leaves the model as before it or as after it (``engine.atomic_step``).

Example:

>>> keras.optimizers.SGD().learning_rate, keras.optimizers.Adam().learning_rate
(0.01, 0.001)
>>> keras.optimizers.SGD().slots_per_weight, keras.optimizers.Adam().slots_per_weight
(0, 2)
"""

import numpy as np

from ..autograd import gradients, precision
from .engine import atomic_step

_DECLARED = ("slots_per_weight", "update_flops_per_weight")


def _arithmetic_dtype(weight):
    """fp16 weights are updated in fp32 arithmetic (their slots are fp32 too); others in their own dtype."""
    return np.dtype(np.float32) if weight.dtype == np.float16 else weight.dtype


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        missing = [name for name in _DECLARED if not hasattr(cls, name)]
        if missing:
            raise TypeError(
                f"{cls.__name__} must declare {' and '.join(missing)}: the IPU model counts slots_per_weight "
                "copies of each weight as optimizer state in tile memory and charges update_flops_per_weight "
                "FLOPs per weight to each weight update. Set them as class attributes (Adam: slots_per_weight = 2, "
                "update_flops_per_weight = 12) or as properties when they depend on the arguments (SGD's momentum)."
            )

    def __init__(self, learning_rate=0.001, name=None):
        if not float(learning_rate) > 0:
            raise ValueError(f"{type(self).__name__}: learning_rate must be > 0, got {learning_rate}")
        self.learning_rate = float(learning_rate)
        self.name = name or type(self).__name__
        self.iterations = 0
        self._slots = {}
        self._slots_this_step = None

    def slot(self, weight, index=0, initial=0.0):
        """This step's copy of ``weight``'s slot ``index`` (``initial`` everywhere the first time): ``update``
        changes it in place, and it replaces the optimizer's slot when the whole step is written."""
        key = (id(weight), index)
        if key not in self._slots_this_step:
            committed = self._slots.get(key)
            self._slots_this_step[key] = (
                np.full(weight.shape, initial, _arithmetic_dtype(weight)) if committed is None else committed.copy()
            )
        return self._slots_this_step[key]

    def apply_gradients(self, grads_and_vars) -> None:
        """Updates each weight from its gradient (a None gradient leaves it alone) and counts the step.

        Every new value (weights, slots, ``iterations``) is computed before any is written, and they are
        written together (``engine.atomic_step``): interrupted by Ctrl-C, the weights, the slots and
        ``iterations`` are all as before the step or all as after it.
        """
        self._slots_this_step = {}  # filled by slot(); an interrupted step leaves it to the next one to reset
        new_values = [
            (weight, "data", self._new_value(weight, grad)) for grad, weight in grads_and_vars if grad is not None
        ]
        slots = {**self._slots, **self._slots_this_step}
        self._slots_this_step = None
        atomic_step.assign_all([*new_values, (self, "_slots", slots), (self, "iterations", self.iterations + 1)])

    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None) -> None:
        """One step down the gradient of ``loss`` with respect to ``var_list``, as Keras' ``minimize``: ``loss``
        is a function of no arguments returning the loss (or the loss itself with the ``tf.GradientTape`` that
        recorded it); ``var_list`` a list of variables or a function returning one.

        Example:

        >>> import ipu_teach.tensorflow as tf
        >>> w = tf.Variable([1.0, -2.0])
        >>> keras.optimizers.SGD(0.25).minimize(lambda: tf.reduce_sum(w * w), [w])
        >>> w.numpy()
        array([ 0.5, -1. ], dtype=float32)
        """
        variables = list(var_list() if callable(var_list) else var_list)
        if tape is not None:
            grads = tape.gradient(loss, variables, output_gradients=grad_loss)
        else:
            if not callable(loss):
                raise ValueError(
                    f"{type(self).__name__}.minimize: `tape` is required when a `Tensor` loss is passed; pass the "
                    "loss as a function of no arguments (lambda: ...) or give the tf.GradientTape that recorded it"
                )
            value = loss()
            if not gradients.carries_gradient(value):
                raise ValueError(
                    f"{type(self).__name__}.minimize: the loss carries no gradient (computed with numpy, or from "
                    "nothing in var_list); compute it with tf functions and Keras losses"
                )
            grads = gradients.of([value], variables, None if grad_loss is None else [grad_loss])
        self.apply_gradients(zip(grads, variables))

    def _new_value(self, weight, grad) -> np.ndarray:
        """The weight's value after ``update``, in its dtype. An fp16 weight's update is computed in fp32 and
        rounded to fp16: to nearest, or stochastically when the IPU's stochastic rounding is on
        (``autograd.precision.write``). ``update`` gets a read-only value: it must not change the weight."""
        dtype = _arithmetic_dtype(weight)
        value = weight.data.astype(dtype, copy=False).view()  # read-only view: the weight stays writeable
        value.flags.writeable = False
        new = self.update(weight, value, np.asarray(grad, dtype=dtype))
        stored = np.empty_like(weight.data)
        precision.write(stored, new)
        return stored

    def update(self, weight, value, grad) -> np.ndarray:
        """Returns the weight's next value from its current ``value`` and gradient ``grad`` (both in the dtype
        of the arithmetic), keeping state in ``self.slot(weight, i)``. ``self.iterations + 1`` is the number
        of the step being computed (1 for the first), as in Keras' optimizers."""
        raise NotImplementedError

    def get_config(self) -> dict:
        return {"name": self.name, "learning_rate": self.learning_rate}


class SGD(Optimizer):
    """Gradient descent (with momentum) optimizer: ``w = w - learning_rate * g``.

    With ``momentum``: ``velocity = momentum * velocity - learning_rate * g`` then ``w = w + velocity``
    (Nesterov: ``w = w + momentum * velocity - learning_rate * g``), as Keras' SGD. On the IPU the update
    runs on the tiles that hold the weights, after the gradients are summed over the replicas (and the
    accumulated micro-batches): R replicas at rate lr step like one batch R times larger at rate R*lr.

    Args:
      learning_rate: A float, the learning rate. Default: 0.01.
      momentum: Float in ``[0, 1]``, accelerates gradient descent in the relevant direction and dampens
        oscillations. Default: 0, plain gradient descent.
      nesterov: Boolean, whether to apply Nesterov momentum. Default: False.
      name: Name of the optimizer. Default: ``"SGD"``.

    Raises:
      ValueError: if ``momentum`` is not in ``[0, 1]``.

    Example:

    >>> optimizer = keras.optimizers.SGD(learning_rate=0.1)
    >>> weight = keras.layers.Dense(1).add_weight("w", (2,), initializer="ones")
    >>> optimizer.apply_gradients([(np.array([1.0, -2.0], np.float32), weight)])
    >>> weight.data
    array([0.9, 1.2], dtype=float32)
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(learning_rate, name)
        if not 0 <= momentum <= 1:
            raise ValueError(f"SGD: momentum must be in [0, 1], got {momentum}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    @property
    def slots_per_weight(self):
        return 1 if self.momentum else 0  # the velocity

    @property
    def update_flops_per_weight(self):
        """w -= lr * g: 2; with momentum v = m * v - lr * g, w += v: 4; Nesterov adds m * v - (lr * g): 6."""
        if not self.momentum:
            return 2
        return 6 if self.nesterov else 4

    def update(self, weight, value, grad):
        lr = self.learning_rate
        if not self.momentum:
            return value - lr * grad
        velocity = self.slot(weight)
        velocity *= self.momentum
        velocity -= lr * grad
        return value + (self.momentum * velocity - lr * grad if self.nesterov else velocity)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    slots_per_weight = 2
    update_flops_per_weight = 12  # two moving averages, a square root, a division, the step

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam"):
        super().__init__(learning_rate, name)
        if amsgrad:
            raise ValueError("Adam: ipu-teach does not implement amsgrad; use amsgrad=False")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update(self, weight, value, grad):
        t = self.iterations + 1  # Keras' local_step
        lr_t = self.learning_rate * np.sqrt(1 - self.beta_2**t) / (1 - self.beta_1**t)
        m, v = self.slot(weight, 0), self.slot(weight, 1)
        m += (1 - self.beta_1) * (grad - m)
        v += (1 - self.beta_2) * (grad * grad - v)
        return value - (lr_t * m / (np.sqrt(v) + self.epsilon)).astype(value.dtype)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class RMSprop(Optimizer):
    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="RMSprop"):
        super().__init__(learning_rate, name)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    @property
    def slots_per_weight(self):
        return 1 + bool(self.momentum) + bool(self.centered)  # mean square, momentum, mean gradient

    @property
    def update_flops_per_weight(self):
        """The mean square (g * g, -, *, +: 4) and the step (sqrt, + epsilon, lr * g, /, w -: 5); momentum
        adds m * mom + step (2); centered adds the mean gradient (3) and ms - mg * mg (2)."""
        return 9 + 2 * bool(self.momentum) + 5 * bool(self.centered)

    def update(self, weight, value, grad):
        ms = self.slot(weight, 0)
        ms += (1 - self.rho) * (grad * grad - ms)
        denominator = ms
        if self.centered:
            mg = self.slot(weight, 2)
            mg += (1 - self.rho) * (grad - mg)
            denominator = ms - mg * mg
        if self.momentum:  # TensorFlow's ApplyRMSProp kernel: epsilon inside the square root
            step = self.learning_rate * grad / np.sqrt(denominator + self.epsilon)
            mom = self.slot(weight, 1)
            mom *= self.momentum
            mom += step
            step = mom
        else:
            step = self.learning_rate * grad / (np.sqrt(denominator) + self.epsilon)
        return value - step.astype(value.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "rho": self.rho,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "centered": self.centered,
        }


class Adagrad(Optimizer):
    """Keras 2.6 ``optimizer_v2/adagrad.py``: an accumulator per weight starting at
    ``initial_accumulator_value``; each step ``accum += g * g`` and ``w -= lr * g / (sqrt(accum) + epsilon)``
    (TensorFlow's ``ResourceApplyAdagradV2`` kernel). Steps shrink as a weight's gradients add up."""

    slots_per_weight = 1
    update_flops_per_weight = 7  # g * g, accum +, sqrt, + epsilon, lr * g, /, w -

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad"):
        super().__init__(learning_rate, name)
        if not initial_accumulator_value >= 0:
            raise ValueError(
                f"Adagrad: initial_accumulator_value must be non-negative, got {initial_accumulator_value}"
            )
        self.initial_accumulator_value, self.epsilon = float(initial_accumulator_value), epsilon

    def update(self, weight, value, grad):
        accumulator = self.slot(weight, initial=self.initial_accumulator_value)
        accumulator += grad * grad
        return value - (self.learning_rate * grad / (np.sqrt(accumulator) + self.epsilon)).astype(value.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad}


def get(identifier) -> Optimizer:
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(
        f"Could not interpret optimizer identifier: {identifier!r}. "
        f"Choose one of {', '.join(repr(n) for n in _BY_NAME)}, or pass an optimizer object "
        "such as keras.optimizers.SGD(learning_rate=0.01)"
    )
