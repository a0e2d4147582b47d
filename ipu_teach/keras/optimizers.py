"""Optimizers with Keras' update rules and defaults (SGD 0.01, Adam and RMSprop 0.001).

Each optimizer declares its cost on the IPU, which the IPU model reads and nothing else decides:
``slots_per_weight``, how many extra copies of each weight it keeps (momentum, moments), counted as
optimizer state in tile memory; ``update_flops_per_weight``, the arithmetic of one update per weight
(one FLOP per multiply, add, square root or division; per-step scalars such as Adam's bias
correction are not per weight), charged to the weight-update compute sets. A subclass that does not
declare both is refused when it is defined. To add an optimizer, write its class here and put it in
``_BY_NAME`` under its name in lower case: ``get("name")`` looks the name up there (in any case), and
``deserialize`` (which ``load_model`` uses) finds its class name among ``_BY_NAME``'s classes; a class left out
is found by neither. Its ``update(weight, value, grad)`` returns the weight's next value and keeps
state in ``self.slot(weight, i)``; the base class writes nothing until every weight's new value is computed,
so that a step interrupted by Ctrl-C leaves the model as before it or as after it (``engine.atomic_step``).

Example:

>>> keras.optimizers.SGD().learning_rate, keras.optimizers.Adam().learning_rate
(0.01, 0.001)
>>> keras.optimizers.SGD().slots_per_weight, keras.optimizers.Adam().slots_per_weight
(0, 2)
"""

import warnings

import numpy as np

from ..autograd import gradients, precision
from . import gradient_clipping
from . import learning_rate_schedule as schedules
from .engine import atomic_step

_DECLARED = ("slots_per_weight", "update_flops_per_weight")
_OPTIONS = ("clipnorm", "clipvalue", "lr", "decay", "global_clipnorm")


def _learning_rate_from(value, owner):
    """A positive number (as a float), a ``LearningRateSchedule``, or a schedule's ``serialize`` dict (as a
    saved configuration holds it)."""
    if isinstance(value, dict):
        return schedules.deserialize(value)
    if isinstance(value, schedules.LearningRateSchedule):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(
            f"{owner}: learning_rate must be a number or a keras.optimizers.schedules.LearningRateSchedule, "
            f"got {value!r}"
        ) from None
    if not number > 0:
        raise ValueError(f"{owner}: learning_rate must be > 0, got {value}")
    return number


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

    def __init__(self, learning_rate=0.001, name=None, **kwargs):
        """``kwargs`` are Keras 2.6's options of every optimizer: ``clipnorm`` (each gradient's norm at
        most this), ``clipvalue`` (each gradient value in [-clipvalue, clipvalue]), ``global_clipnorm`` (the
        norm of all the gradients together at most this), ``decay`` (the learning rate divided by
        1 + decay * iterations) and ``lr``, the deprecated name of ``learning_rate``."""
        for key, value in kwargs.items():
            if key not in _OPTIONS:
                raise TypeError(
                    f"Unexpected keyword argument passed to optimizer: {key}. Allowed kwargs are "
                    f"{', '.join(_OPTIONS)} (and this optimizer's own arguments)."
                )
            if value is not None and value < 0:
                raise ValueError(f"Expected {key} >= 0, received: {value}")
        if "lr" in kwargs:
            warnings.warn("The `lr` argument is deprecated, use `learning_rate` instead.", UserWarning, stacklevel=3)
            learning_rate = kwargs["lr"]
        if kwargs.get("clipnorm") is not None and kwargs.get("global_clipnorm") is not None:
            raise ValueError(
                "Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                f"`clipnorm`={kwargs['clipnorm']}, `global_clipnorm`={kwargs['global_clipnorm']}."
            )
        self.learning_rate = _learning_rate_from(learning_rate, type(self).__name__)
        self.decay = float(kwargs.get("decay") or 0.0)
        self.clipnorm, self.clipvalue, self.global_clipnorm = (
            kwargs.get("clipnorm"),
            kwargs.get("clipvalue"),
            kwargs.get("global_clipnorm"),
        )
        self.name = name or type(self).__name__
        self.iterations = 0
        self._slots = {}
        self._slots_this_step = None

    @property
    def lr(self):
        """Keras 2's other name for ``learning_rate``."""
        return self.learning_rate

    @lr.setter
    def lr(self, value):
        self.learning_rate = value

    def step_learning_rate(self):
        """The learning rate of the step being computed, as Keras' ``_decayed_lr``: the schedule at
        ``iterations`` (0 at the first step), then divided by ``1 + decay * iterations`` (in float32)."""
        learning_rate = self.learning_rate
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            value = learning_rate(self.iterations)
            learning_rate = np.float32(value.numpy() if hasattr(value, "numpy") else value)
        if self.decay:
            learning_rate = np.float32(learning_rate) / (np.float32(1) + np.float32(self.decay) * self.iterations)
        return learning_rate

    @property
    def clipping_flops_per_weight(self) -> int:
        """clipvalue: a min and a max (2); clipnorm: square, sum, multiply, divide (4); global_clipnorm:
        square, sum, multiply (3). Charged to the weight update beside ``update_flops_per_weight``."""
        return (
            2 * (self.clipvalue is not None) + 4 * (self.clipnorm is not None) + 3 * (self.global_clipnorm is not None)
        )

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
        grads_and_vars = [(grad, weight) for grad, weight in grads_and_vars if grad is not None]
        # clipped in the update's arithmetic (fp32 for fp16 weights: an fp16 sum of squares overflows at 65504)
        arithmetic = [np.asarray(grad, dtype=_arithmetic_dtype(weight)) for grad, weight in grads_and_vars]
        grads = gradient_clipping.clipped(arithmetic, self.clipvalue, self.clipnorm, self.global_clipnorm)
        new_values = [
            (weight, "data", self._new_value(weight, grad)) for grad, (_, weight) in zip(grads, grads_and_vars)
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
        """Keras 2.6's configuration: the name, the clipping options given, the learning rate (a schedule as
        ``{"class_name", "config"}``), ``decay`` and the optimizer's own arguments."""
        learning_rate = self.learning_rate
        if isinstance(learning_rate, schedules.LearningRateSchedule):
            learning_rate = schedules.serialize(learning_rate)
        clipping = {key: getattr(self, key) for key in ("clipnorm", "clipvalue", "global_clipnorm")}
        return {
            "name": self.name,
            **{key: value for key, value in clipping.items() if value is not None},
            "learning_rate": learning_rate,
            "decay": self.decay,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The optimizer ``get_config`` described (no state), as Keras' ``from_config``."""
        config = dict(config)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"], custom_objects)
        return cls(**config)


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

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
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
        lr = self.step_learning_rate()
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

    def __init__(
        self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, name="Adam", **kwargs
    ):
        super().__init__(learning_rate, name, **kwargs)
        if amsgrad:
            raise ValueError("Adam: ipu-teach does not implement amsgrad; use amsgrad=False")
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update(self, weight, value, grad):
        t = self.iterations + 1  # Keras' local_step
        lr_t = self.step_learning_rate() * np.sqrt(1 - self.beta_2**t) / (1 - self.beta_1**t)
        m, v = self.slot(weight, 0), self.slot(weight, 1)
        m += (1 - self.beta_1) * (grad - m)
        v += (1 - self.beta_2) * (grad * grad - v)
        return value - (lr_t * m / (np.sqrt(v) + self.epsilon)).astype(value.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "beta_1": self.beta_1,
            "beta_2": self.beta_2,
            "epsilon": self.epsilon,
            "amsgrad": False,
        }


class RMSprop(Optimizer):
    def __init__(
        self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, name="RMSprop", **kwargs
    ):
        super().__init__(learning_rate, name, **kwargs)
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
            step = self.step_learning_rate() * grad / np.sqrt(denominator + self.epsilon)
            mom = self.slot(weight, 1)
            mom *= self.momentum
            mom += step
            step = mom
        else:
            step = self.step_learning_rate() * grad / (np.sqrt(denominator) + self.epsilon)
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

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, name="Adagrad", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        if not initial_accumulator_value >= 0:
            raise ValueError(
                f"Adagrad: initial_accumulator_value must be non-negative, got {initial_accumulator_value}"
            )
        self.initial_accumulator_value, self.epsilon = float(initial_accumulator_value), epsilon

    def update(self, weight, value, grad):
        accumulator = self.slot(weight, initial=self.initial_accumulator_value)
        accumulator += grad * grad
        return value - (self.step_learning_rate() * grad / (np.sqrt(accumulator) + self.epsilon)).astype(value.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "epsilon": self.epsilon,
        }


class Adadelta(Optimizer):
    """Keras 2.6 ``optimizer_v2/adadelta.py`` (TensorFlow's ``ApplyAdadelta`` kernel): running means of the
    squared gradients and of the squared updates set each weight's step size, so that the learning rate
    (Keras' default 0.001; 1.0 in the paper) only scales it.

    ``accum = rho * accum + (1 - rho) * g * g``; ``update = sqrt(accum_update + eps) / sqrt(accum + eps) * g``;
    ``w -= lr * update``; ``accum_update = rho * accum_update + (1 - rho) * update * update``.

    Example:

    >>> keras.optimizers.Adadelta().get_config()
    {'name': 'Adadelta', 'learning_rate': 0.001, 'decay': 0.0, 'rho': 0.95, 'epsilon': 1e-07}
    """

    slots_per_weight = 2  # the running means of g * g and of update * update
    update_flops_per_weight = 16  # accum 4, update 6 (two + eps, sqrt, rsqrt, two *), w 2, accum_update 4

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def update(self, weight, value, grad):
        accum, accum_update = self.slot(weight, 0), self.slot(weight, 1)
        accum *= self.rho
        accum += grad * grad * (1 - self.rho)
        step = np.sqrt(accum_update + self.epsilon) / np.sqrt(accum + self.epsilon) * grad
        accum_update *= self.rho
        accum_update += step * step * (1 - self.rho)
        return value - (step * self.step_learning_rate()).astype(value.dtype)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


class Adamax(Optimizer):
    """Keras 2.6 ``optimizer_v2/adamax.py`` (TensorFlow's ``ApplyAdaMax``): Adam with the infinity norm,
    ``m += (1 - beta_1) * (g - m)``, ``v = max(beta_2 * v, |g|)``, ``w -= lr / (1 - beta_1 ** t) * m / (v + eps)``.

    Example:

    >>> keras.optimizers.Adamax().slots_per_weight
    2
    """

    slots_per_weight = 2  # m and v
    update_flops_per_weight = 10  # m 3, v 3 (*, abs, max), the step 4 (+ eps, /, *, -)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Adamax", **kwargs):
        super().__init__(learning_rate, name, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def update(self, weight, value, grad):
        t = self.iterations + 1
        m, v = self.slot(weight, 0), self.slot(weight, 1)
        m += (grad - m) * (1 - self.beta_1)
        np.maximum(v * self.beta_2, np.abs(grad), out=v)
        scaled_lr = np.float32(self.step_learning_rate()) / (np.float32(1) - np.float32(self.beta_1) ** t)
        return value - (scaled_lr * (m / (v + self.epsilon))).astype(value.dtype)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Nadam(Optimizer):
    """Keras 2.6 ``optimizer_v2/nadam.py``: Adam with Nesterov momentum, whose momentum follows Dozat's
    schedule ``mu_t = beta_1 * (1 - 0.5 * 0.96 ** (schedule_decay * t))``; the product of the mu's (Keras'
    ``momentum_cache``) depends on the step only, so it is recomputed rather than kept. As in Keras, the
    ``decay`` in its configuration is this ``schedule_decay`` (0.004), not a decay of the learning rate, and
    a learning-rate schedule is refused.

    Example:

    >>> keras.optimizers.Nadam().get_config()["decay"]
    0.004
    """

    slots_per_weight = 2  # m and v
    update_flops_per_weight = 18  # g' 1, m 3, m' 1, v 4, v' 1, m_bar 3, the step 5

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, name="Nadam", **kwargs):
        schedule_decay = kwargs.pop("schedule_decay", kwargs.pop("decay", 0.004))
        if isinstance(kwargs.get("lr", learning_rate), schedules.LearningRateSchedule):
            raise ValueError(
                "The Nadam optimizer does not support tf.keras.optimizers.LearningRateSchedules as the learning rate."
            )
        super().__init__(learning_rate, name, **kwargs)
        self.decay = float(schedule_decay)  # read by the momentum schedule, not by step_learning_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self._momentum_products = [np.float32(1)]  # the product of mu_1 ... mu_t at index t, in float32

    def step_learning_rate(self):
        return self.learning_rate  # Nadam's decay is the momentum schedule's

    def _mu(self, t):
        return np.float32(self.beta_1) * (
            np.float32(1) - np.float32(0.5) * np.float32(0.96) ** (np.float32(self.decay) * np.float32(t))
        )

    def _momentum_product(self, t):
        while len(self._momentum_products) <= t:
            self._momentum_products.append(self._momentum_products[-1] * self._mu(len(self._momentum_products)))
        return self._momentum_products[t]

    def update(self, weight, value, grad):
        f32, t = np.float32, self.iterations + 1
        beta_1, beta_2 = f32(self.beta_1), f32(self.beta_2)
        mu_t, mu_next = self._mu(t), self._mu(t + 1)
        schedule_new = self._momentum_product(t)
        schedule_next = schedule_new * mu_next
        m, v = self.slot(weight, 0), self.slot(weight, 1)
        g_prime = grad / (f32(1) - schedule_new)
        m *= beta_1
        m += (f32(1) - beta_1) * grad
        m_prime = m / (f32(1) - schedule_next)
        v *= beta_2
        v += (f32(1) - beta_2) * (grad * grad)
        v_prime = v / (f32(1) - beta_2**t)
        m_bar = (f32(1) - mu_t) * g_prime + mu_next * m_prime
        return value - (f32(self.learning_rate) * m_bar / (np.sqrt(v_prime) + f32(self.epsilon))).astype(value.dtype)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon}


class Ftrl(Optimizer):
    """Keras 2.6 ``optimizer_v2/ftrl.py`` (TensorFlow's ``ApplyFtrl`` and, with l2 shrinkage,
    ``ApplyFtrlV2``): "follow the regularized leader", for wide sparse models. Per weight an accumulator of
    squared gradients (from ``initial_accumulator_value``) and a linear term; the weight is the closed-form
    minimiser, exactly 0 where ``|linear| <= l1_regularization_strength``.

    Example:

    >>> keras.optimizers.Ftrl(l1_regularization_strength=0.01).slots_per_weight
    2
    """

    slots_per_weight = 2  # the accumulator and the linear term

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        name="Ftrl",
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        **kwargs,
    ):
        for key, value, sign in (
            ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
            ("learning_rate_power", -learning_rate_power, "negative or zero"),
            ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
            ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength, "positive or zero"),
        ):
            if value < 0:
                shown = learning_rate_power if key == "learning_rate_power" else value
                raise ValueError(f"`{key}` needs to be {sign}. Received: {key}={shown}.")
        super().__init__(learning_rate, name, **kwargs)
        self.learning_rate_power, self.initial_accumulator_value = learning_rate_power, initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    @property
    def update_flops_per_weight(self):
        """The accumulator (2), the linear term (two powers, -, /, *, -, +: 7), the new weight (sign, *, -,
        power, /, +, /, abs, >, select: 10); l2 shrinkage adds 2 * l2 * w to the gradient (3)."""
        return 19 + 3 * (self.l2_shrinkage_regularization_strength > 0)

    def update(self, weight, value, grad):
        f32 = np.float32
        lr = f32(self.step_learning_rate())
        l1 = f32(self.l1_regularization_strength)
        l2 = f32(self.l2_regularization_strength) + f32(self.beta) / (f32(2) * lr)
        power = -f32(self.learning_rate_power)
        accum = self.slot(weight, 0, initial=self.initial_accumulator_value)
        linear = self.slot(weight, 1)

        def powered(x):
            return np.sqrt(x) if power == f32(0.5) else np.power(x, power)

        new_accum = accum + grad * grad
        shrunk = grad
        if self.l2_shrinkage_regularization_strength > 0:
            shrunk = grad + f32(2) * f32(self.l2_shrinkage_regularization_strength) * value
        linear += shrunk - (powered(new_accum) - powered(accum)) / lr * value
        quadratic = powered(new_accum) / lr + f32(2) * l2
        new_value = np.where(np.abs(linear) > l1, (l1 * np.sign(linear) - linear) / quadratic, f32(0))
        accum[...] = new_accum
        return new_value.astype(value.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "initial_accumulator_value": self.initial_accumulator_value,
            "learning_rate_power": self.learning_rate_power,
            "l1_regularization_strength": self.l1_regularization_strength,
            "l2_regularization_strength": self.l2_regularization_strength,
            "beta": self.beta,
            "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
        }


OptimizerV2 = Optimizer  # Keras 2.6's name for the base class (keras.optimizer_v2.optimizer_v2.OptimizerV2)

_BY_NAME = {
    "sgd": SGD,
    "adam": Adam,
    "rmsprop": RMSprop,
    "adagrad": Adagrad,
    "adadelta": Adadelta,
    "adamax": Adamax,
    "nadam": Nadam,
    "ftrl": Ftrl,
}


def serialize(optimizer) -> dict:
    """``{"class_name", "config"}``, as Keras' ``optimizers.serialize``."""
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None) -> Optimizer:
    """The optimizer ``serialize`` described; the class name in any case, as Keras' ``deserialize``."""
    known = {**{cls.__name__.lower(): cls for cls in _BY_NAME.values()}, **(custom_objects or {})}
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = known.get(name) or known.get(str(name).lower())
    if cls is None:
        raise ValueError(
            f"Unknown optimizer: {name!r}. Choose one of {', '.join(cls.__name__ for cls in _BY_NAME.values())}, "
            "or pass your Optimizer subclass in custom_objects"
        )
    return cls.from_config(config.get("config", {}), custom_objects)


def get(identifier) -> Optimizer:
    """An optimizer from an instance, a name (``"adam"``, default arguments) or a ``serialize`` dict; a TensorFlow 1
    optimizer is wrapped in ``optimizer_v1.TFOptimizer``, as Keras 2.6 wraps it."""
    if isinstance(identifier, Optimizer):
        return identifier
    from . import optimizer_v1  # it builds on this module

    if optimizer_v1.is_tf1_optimizer(identifier):
        return optimizer_v1.TFOptimizer(identifier)
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(
        f"Could not interpret optimizer identifier: {identifier!r}. "
        f"Choose one of {', '.join(repr(n) for n in _BY_NAME)}, or pass an optimizer object "
        "such as keras.optimizers.SGD(learning_rate=0.01)"
    )
