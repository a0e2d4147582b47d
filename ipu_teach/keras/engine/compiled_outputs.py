"""What ``compile`` was given, per model output: its loss, the loss's weight and its metrics.

A single-output model reports ``loss`` and each metric by its name. A multi-output model reports,
as TensorFlow 2's Keras does, the weighted total ``loss``, then ``<output>_loss`` for each output,
then ``<output>_<metric>``, where ``<output>`` is the name of the layer that makes that output.
"""

import copy

import numpy as np

from ...autograd import ops
from .. import losses as losses_module
from .. import metrics as metrics_module
from . import sample_weights


class LossValue(float):
    """A batch's total loss, carrying each output's own loss for the per-output metrics."""

    per_output: list = []


def _per_output(value, names, what, default, per_output):
    """``value`` given once for every output, per output (when ``per_output(value)``: a list with one
    entry per output) or as a dict keyed by output name."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(names))
        if unknown:
            raise ValueError(f"Unknown entries in {what} dictionary: {unknown}. Only expected following keys: {names}")
        return [value.get(name, default) for name in names]
    if per_output(value):
        if len(value) != len(names):
            raise ValueError(
                f"When passing a list as {what}, it should have one entry per model output. The model "
                f"has {len(names)} output(s) ({names}), but you passed {what}={value!r}"
            )
        return list(value)
    return [value] * len(names)


def _is_list(value):
    return isinstance(value, (list, tuple))


class CompiledOutputs:
    """Resolved lazily (a Sequential model may be compiled before it knows its output)."""

    def __init__(self, loss, loss_weights, metrics):
        for m in metrics.values() if isinstance(metrics, dict) else metrics or []:
            for one in m if isinstance(m, (list, tuple)) else [m]:
                if isinstance(one, str):
                    metrics_module.get(one)  # unknown names fail here, at compile, as in Keras
                elif not isinstance(one, metrics_module.Metric) and not callable(one):
                    raise ValueError(f"Unknown metric {one!r}")
        self._given = (loss, loss_weights, metrics)
        self.loss_tracker = metrics_module.Mean(name="loss")
        self.names = None

    def resolve(self, model) -> "CompiledOutputs":
        if self.names is not None:
            return self
        loss, loss_weights, metrics = self._given
        self.names = [t.layer.name for t in model.outputs] if model.built else ["output"]
        multi = len(self.names) > 1
        self.losses = [
            None if given is None else losses_module.get(given)
            for given in _per_output(loss, self.names, "loss", None, _is_list)
        ]
        self.weights = [
            float(w)
            for w in _per_output(
                1.0 if loss_weights is None else loss_weights, self.names, "loss_weights", 1.0, _is_list
            )
        ]
        self.output_trackers = [metrics_module.Mean(name=f"{name}_loss") for name in self.names] if multi else []
        self.output_metrics = []
        for name, given in zip(
            self.names,
            _per_output(
                metrics or [], self.names, "metrics", [], lambda v: multi and v and all(_is_list(e) for e in v)
            ),
        ):
            built = []
            for m in given if isinstance(given, (list, tuple)) else [given]:
                metric = copy.deepcopy(m) if isinstance(m, metrics_module.Metric) and multi else metrics_module.get(m)
                if multi:
                    metric.name = f"{name}_{metric.name}"
                built.append(metric)
            self.output_metrics.append(built)
        return self

    @property
    def metrics(self) -> list:
        return [self.loss_tracker] + self.output_trackers + [m for ms in self.output_metrics for m in ms]

    def loss(self, y_true, y_pred):
        """The scalar to minimise, ``sum(weight * loss)`` over the outputs, and each output's loss."""
        y_true, sample_weight = sample_weights.unpack(y_true)
        ys, preds = (y_true, y_pred) if isinstance(y_pred, list) else ([y_true], [y_pred])
        total, parts = None, []
        for fn, weight, y, pred in zip(self.losses, self.weights, ys, preds):
            if fn is None:
                continue
            value = fn(y, pred, sample_weight)
            parts.append(float(value.data))
            if weight != 1.0:
                value = ops.mul(value, np.float32(weight))
            total = value if total is None else ops.add(total, value)
        return total, parts

    def update(self, loss_value, y_true, y_pred) -> None:
        y_true, _ = sample_weights.unpack(y_true)  # Keras weighs the loss, not the metrics
        ys, preds = (y_true, y_pred) if isinstance(y_pred, list) else ([y_true], [y_pred])
        batch = len(preds[0])
        self.loss_tracker.update_state(loss_value, sample_weight=batch)
        for tracker, part in zip(self.output_trackers, getattr(loss_value, "per_output", [])):
            tracker.update_state(part, sample_weight=batch)
        for metrics, y, pred in zip(self.output_metrics, ys, preds):
            for m in metrics:
                m.update_state(y, pred)

    def check_labels(self, y, output_shapes) -> None:
        ys = y if isinstance(y, list) else [y]
        if len(ys) != len(self.names):
            raise ValueError(
                f"The model has {len(self.names)} outputs ({self.names}) but {len(ys)} label array(s) "
                "were given; pass y as a list (one array per output) or a dict keyed by output name"
            )
        for fn, labels, shape in zip(self.losses, ys, output_shapes):
            if fn is not None:
                fn.check_labels(np.shape(labels), shape)
                if hasattr(fn, "check_values"):
                    fn.check_values(labels, shape)
