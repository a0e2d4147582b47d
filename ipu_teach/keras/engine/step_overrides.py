"""``train_step``, ``test_step`` and ``predict_step`` written by the user, run by ``fit``, ``evaluate`` and
``predict`` with Keras 2's semantics (keras/engine/training.py): the step is given the batch as ``data``
(``(x, y)``, ``(x, y, sample_weight)`` or ``(x,)``), uses ``self.compiled_loss``, ``self.compiled_metrics``
and ``self.optimizer``, and returns the logs (``{m.name: m.result() for m in self.metrics}``), which the
progress bar, the callbacks and the History show. A training step is one step: what it writes (weights,
optimizer state, moving statistics) is written together or not at all (:mod:`.atomic_step`).

On the simulated IPU the step is costed from the ops it applies, as a plain model's step of the same ops.
"""

from __future__ import annotations

import copy

import numpy as np

from ...autograd import Tensor, record
from . import atomic_step, sample_weights

_DEFAULTS = {"train": "Model.train_step", "test": "Model.test_step", "predict": "Model.predict_step"}


def overridden(model, mode) -> bool:
    """Whether ``model``'s class writes its own step for ``mode`` ("train", "test" or "predict")."""
    return getattr(type(model), f"{mode}_step").__qualname__ != _DEFAULTS[mode]


def data_of(x, y):
    """The batch as Keras gives it to a step: ``(x, y)``, ``(x, y, sample_weight)``, or ``(x,)``."""
    if y is None:
        return (x,)
    labels, weights = sample_weights.unpack(y)
    return (x, labels) if weights is None else (x, labels, weights)


def unpack_x_y_sample_weight(data):
    """Keras' ``keras.utils.unpack_x_y_sample_weight``: ``(x, y, sample_weight)`` of a batch, None where absent.

    Example:

    >>> keras.utils.unpack_x_y_sample_weight((1, 2))
    (1, 2, None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if not 1 <= len(data) <= 3:
        raise ValueError(
            f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: {data}"
        )
    return tuple(data) + (None,) * (3 - len(data))


def _plain(value):
    value = value.data if isinstance(value, Tensor) else value
    return float(np.asarray(value)) if np.size(value) == 1 else np.asarray(value)


def values(outputs):
    """A step's outputs as numpy: a tensor's values, or a list of them."""
    if isinstance(outputs, (list, tuple)):
        return [values(o) for o in outputs]
    return np.asarray(outputs.data if isinstance(outputs, Tensor) else outputs)


def runner(model, mode):
    """What runs one batch ``(x, y)`` of ``mode``: the model's own step, else the built-in one. A user's train
    or test step's logs are kept for :func:`logs`."""
    if not overridden(model, mode):
        return getattr(model, f"{mode}_batch")
    step = getattr(model, f"{mode}_step")
    if mode == "predict":
        return lambda x, y=None: values(step((x,)))

    def run(x, y):
        data = data_of(x, y)
        result = atomic_step.run(step, data) if mode == "train" else step(data)
        if not isinstance(result, dict):
            raise TypeError(
                f"{type(model).__name__}.{mode}_step returned {type(result).__name__}: it should return a dict of "
                "logs, as Keras' do (e.g. `return {m.name: m.result() for m in self.metrics}`)"
            )
        model.step_logs[mode] = {name: _plain(value) for name, value in result.items()}
        return model.step_logs[mode].get("loss", float("nan"))

    return run


def logs(model, mode) -> dict:
    """The logs of the last batch of ``mode``: what the model's own step returned, else its metrics."""
    if mode != "predict" and overridden(model, mode):
        return dict(model.step_logs.get(mode, {}))
    return model.metric_logs()


class _Discarded(Exception):
    """Ends a step run only for its ops: the step's writes are dropped (atomic_step writes none on an exception)."""


def recorded_ops(model, mode, x, y) -> list:
    """The ops the model's own ``mode`` step applies to one batch, from running it once with nothing kept:
    its writes dropped, its metrics as before. (The caller keeps the weights and random generators.)"""
    metrics = [(m, copy.deepcopy(vars(m))) for m in model.metrics]
    step = getattr(model, f"{mode}_step")

    def run_and_discard():
        step(data_of(x, y))
        raise _Discarded

    try:
        with record() as tape:
            atomic_step.run(run_and_discard)
    except _Discarded:
        pass
    finally:
        for metric, state in metrics:
            vars(metric).update(state)
    return tape


class CompiledLoss:
    """``model.compiled_loss``, Keras' container of the losses given to ``compile``: called on labels and
    predictions it gives the loss to minimise (the tensor a GradientTape differentiates) and adds it to the
    ``loss`` metric, as Keras' ``LossesContainer`` does."""

    def __init__(self, model):
        self._model = model

    def __call__(self, y_true, y_pred, sample_weight=None, regularization_losses=None):
        outputs = self._model.compiled_outputs.resolve(self._model)
        labels = y_true if sample_weight is None else sample_weights.Weighted(y_true, np.asarray(sample_weight))
        total, parts = outputs.loss(labels, y_pred)
        for extra in regularization_losses or []:
            total = total + extra
        first = y_pred[0] if isinstance(y_pred, (list, tuple)) else y_pred
        outputs.update_losses(parts, float(total.data), len(values(first)))
        return total

    @property
    def metrics(self) -> list:
        outputs = self._model.compiled_outputs.resolve(self._model)
        return [outputs.loss_tracker] + outputs.output_trackers


class CompiledMetrics:
    """``model.compiled_metrics``, Keras' container of the metrics given to ``compile``: ``update_state`` adds a
    batch to each (not to the ``loss`` metric, which ``compiled_loss`` updates)."""

    def __init__(self, model):
        self._model = model

    def update_state(self, y_true, y_pred, sample_weight=None) -> None:
        labels = y_true if sample_weight is None else sample_weights.Weighted(y_true, np.asarray(sample_weight))
        self._model.compiled_outputs.resolve(self._model).update_metrics(labels, values(y_pred))

    @property
    def metrics(self) -> list:
        outputs = self._model.compiled_outputs.resolve(self._model)
        return [m for ms, ws in zip(outputs.output_metrics, outputs.output_weighted_metrics) for m in ms + ws]

    def reset_state(self) -> None:
        for metric in self.metrics:
            metric.reset_state()
