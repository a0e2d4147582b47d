"""``keras.optimizers.schedules``: learning rates that change with the optimizer's step, as Keras 2.6's
``optimizer_v2/learning_rate_schedule.py``.

An optimizer given a schedule as its ``learning_rate`` calls it with its ``iterations`` (0 at the first step)
before each update. The arithmetic is float32, as Keras' (the schedule's tensors take the dtype of a Python
float, float32), so a schedule gives the same learning rate to the last bit. A subclass of
``LearningRateSchedule`` with ``__call__(step)`` (and ``get_config`` to be saved) works as in Keras.

Example:

>>> schedule = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> float(schedule(0)), float(schedule(10)), float(schedule(20))
(0.10000000149011612, 0.05000000074505806, 0.02500000037252903)
"""

import math

import numpy as np

_f32 = np.float32


class LearningRateSchedule:
    """A learning rate as a function of the step: subclass it and define ``__call__(self, step)``."""

    def __call__(self, step):
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `__call__(self, step)`."
        )

    def get_config(self) -> dict:
        raise NotImplementedError(
            f"Learning rate schedule '{type(self).__name__}' must override `get_config()` in order to be serializable."
        )

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class ExponentialDecay(LearningRateSchedule):
    """``initial_learning_rate * decay_rate ** (step / decay_steps)`` (the exponent floored with ``staircase``)."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        self.initial_learning_rate, self.decay_steps, self.decay_rate = initial_learning_rate, decay_steps, decay_rate
        self.staircase, self.name = staircase, name

    def __call__(self, step):
        p = _f32(step) / _f32(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return _f32(self.initial_learning_rate) * np.power(_f32(self.decay_rate), p)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class InverseTimeDecay(ExponentialDecay):
    """``initial_learning_rate / (1 + decay_rate * step / decay_steps)`` (floored with ``staircase``)."""

    def __call__(self, step):
        p = _f32(step) / _f32(self.decay_steps)
        if self.staircase:
            p = np.floor(p)
        return _f32(self.initial_learning_rate) / (_f32(1) + _f32(self.decay_rate) * p)


class PiecewiseConstantDecay(LearningRateSchedule):
    """``values[0]`` up to and including step ``boundaries[0]``, ``values[1]`` up to ``boundaries[1]``, ...,
    ``values[-1]`` after the last boundary."""

    def __init__(self, boundaries, values, name=None):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                "The length of boundaries should be 1 less than the length of values. Received: "
                f"boundaries={boundaries} of length {len(boundaries)}, and values={values} of length {len(values)}."
            )
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        passed = sum(step > boundary for boundary in self.boundaries)  # the boundaries are increasing
        return _f32(self.values[passed])

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """From ``initial_learning_rate`` to ``end_learning_rate`` over ``decay_steps`` along ``(1 - p) ** power``;
    with ``cycle`` it starts again over a ``decay_steps`` multiple, else it stays at the end."""

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False, name=None):
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = end_learning_rate, power, cycle, name

    def __call__(self, step):
        step, decay_steps = _f32(step), _f32(self.decay_steps)
        if self.cycle:
            decay_steps = decay_steps * (_f32(1) if step == 0 else np.ceil(step / decay_steps))
        else:
            step = min(step, decay_steps)
        p = step / decay_steps
        start, end = _f32(self.initial_learning_rate), _f32(self.end_learning_rate)
        return (start - end) * np.power(_f32(1) - p, _f32(self.power)) + end

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecay(LearningRateSchedule):
    """Half a cosine from ``initial_learning_rate`` down to ``alpha`` times it over ``decay_steps``; with
    ``warmup_target`` (tf-keras 2.12's addition), first a straight line up to it over ``warmup_steps``."""

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name=None, warmup_target=None, warmup_steps=0):
        self.initial_learning_rate, self.decay_steps, self.alpha, self.name = (
            initial_learning_rate,
            decay_steps,
            alpha,
            name,
        )
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def _decayed(self, step, decay_steps, start):
        cosine = _f32(0.5) * (_f32(1) + np.cos(_f32(math.pi) * (step / decay_steps)))
        return start * ((_f32(1) - _f32(self.alpha)) * cosine + _f32(self.alpha))

    def __call__(self, step):
        start, decay_steps, step = _f32(self.initial_learning_rate), _f32(self.decay_steps), _f32(step)
        if self.warmup_target is None:
            return self._decayed(min(step, decay_steps), decay_steps, start)
        target, warmup_steps = _f32(self.warmup_target), _f32(self.warmup_steps)
        step = min(step, decay_steps + warmup_steps)
        if step < warmup_steps:
            return (target - start) * (step / warmup_steps) + start
        return self._decayed(step - warmup_steps, decay_steps, target)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


_KNOWN = {
    cls.__name__: cls
    for cls in (ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay, CosineDecay)
}


def serialize(schedule) -> dict:
    """``{"class_name": ..., "config": ...}``, as Keras 2.6 writes a schedule into an optimizer's config."""
    return {"class_name": type(schedule).__name__, "config": schedule.get_config()}


def deserialize(config, custom_objects=None) -> LearningRateSchedule:
    """The schedule ``serialize`` described; a subclass of your own is found in ``custom_objects``."""
    known = {**_KNOWN, **(custom_objects or {})}
    name = config.get("class_name") if isinstance(config, dict) else None
    if name not in known:
        raise ValueError(
            f"Unknown learning rate schedule: {name!r}. Pass your LearningRateSchedule subclass in "
            f"custom_objects={{{str(name)!r}: TheClass}}, or use one of {', '.join(sorted(_KNOWN))}"
        )
    return known[name].from_config(config.get("config", {}))
