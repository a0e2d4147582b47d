"""What ``compile`` was given, per model output: its loss, the loss's weight and its metrics.

A single-output model reports ``loss`` and each metric by its name. A multi-output model reports,
as TensorFlow 2's Keras does, the weighted total ``loss``, then ``<output>_loss`` for each output,
then ``<output>_<metric>``, where ``<output>`` is the name of the layer that makes that output.
``weighted_metrics`` are weighed by the samples' weights (``sample_weight``, ``class_weight``), the
others are not; a weighted metric whose name is taken is reported as ``weighted_<metric>``
(keras/engine/compile_utils.py ``MetricsContainer``).
"""

import copy

import numpy as np

from ...autograd import ops
from ...autograd.symbolic import is_symbolic
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


def _check_metrics_known(given) -> None:
    """Unknown metric names fail at compile, as in Keras; ``given`` is a list, or a dict of them by output."""
    for per_output in given.values() if isinstance(given, dict) else given or []:
        for one in per_output if isinstance(per_output, (list, tuple)) else [per_output]:
            if isinstance(one, str):
                metrics_module.get(one)
            elif not isinstance(one, metrics_module.Metric) and not callable(one):
                raise ValueError(f"Unknown metric {one!r}")


class CompiledOutputs:
    """Resolved lazily (a Sequential model may be compiled before it knows its output)."""

    def __init__(self, loss, loss_weights, metrics, weighted_metrics=None):
        _check_metrics_known(metrics)
        _check_metrics_known(weighted_metrics)
        self._given = (loss, loss_weights, metrics)
        self.weighted_metrics_given = weighted_metrics
        self.loss_tracker = metrics_module.Mean(name="loss")
        self.names = None

    def resolve(self, model) -> "CompiledOutputs":
        """Each output's loss, loss weight and metrics, once the model knows its outputs (the first time only)."""
        if self.names is not None:
            return self
        loss, loss_weights, metrics = self._given
        self.names = model.output_names or ["output"]
        self.losses = self._losses_per_output(loss)
        self.weights = self._loss_weights_per_output(loss_weights)
        self.output_trackers = self._output_loss_trackers()
        self.output_metrics = self._metrics_per_output(metrics, "metrics")
        self.output_weighted_metrics = self._metrics_per_output(self.weighted_metrics_given, "weighted_metrics")
        self._name_metrics()
        return self

    @property
    def _multi_output(self) -> bool:
        return len(self.names) > 1

    def _losses_per_output(self, loss) -> list:
        """One loss function per output, or None for an output without a loss."""
        given = _per_output(loss, self.names, "loss", None, _is_list)
        return [None if one is None else losses_module.get(one) for one in given]

    def _loss_weights_per_output(self, loss_weights) -> list:
        """One float per output, 1.0 unless given."""
        given = _per_output(1.0 if loss_weights is None else loss_weights, self.names, "loss_weights", 1.0, _is_list)
        return [float(weight) for weight in given]

    def _output_loss_trackers(self) -> list:
        """``<output>_loss`` for each output of a multi-output model (a single output reports ``loss`` only)."""
        return [metrics_module.Mean(name=f"{name}_loss") for name in self.names] if self._multi_output else []

    def _metrics_per_output(self, given, what) -> list:
        """One list of Metric objects per output (a Metric given for several outputs is copied for each)."""
        multi = self._multi_output
        per_output = _per_output(given or [], self.names, what, [], lambda v: multi and v and all(map(_is_list, v)))
        return [
            [
                copy.deepcopy(m) if isinstance(m, metrics_module.Metric) and multi else metrics_module.get(m)
                for m in (one if isinstance(one, (list, tuple)) else [one])
            ]
            for one in per_output
        ]

    def _name_metrics(self) -> None:
        """Keras' names: ``<output>_`` first for a multi-output model; ``weighted_`` for a weighted metric
        whose name is taken; two metrics of the same name are an error."""
        taken = set()
        multi = self._multi_output
        for output, metrics, weighted in zip(self.names, self.output_metrics, self.output_weighted_metrics):
            for metric, is_weighted in [(m, False) for m in metrics] + [(m, True) for m in weighted]:
                prefix = f"{output}_" if multi else ""
                if is_weighted and prefix + metric.name in taken:
                    prefix += "weighted_"
                metric.name = prefix + metric.name
                if metric.name in taken:
                    raise ValueError(
                        f"Found two {'weighted ' if is_weighted else ''}metrics with the same name: {metric.name}. "
                        "All the metrics added to the model need to have unique names."
                    )
                taken.add(metric.name)

    @property
    def metrics(self) -> list:
        per_output = [m for ms, ws in zip(self.output_metrics, self.output_weighted_metrics) for m in ms + ws]
        return [self.loss_tracker] + self.output_trackers + per_output

    def device_work(self, output_shapes) -> list:
        """``(metric name, vector work)`` of each metric's step on the device, the loss trackers' (a scalar each)
        first, then each output's metrics for its predictions (``output_shapes``, the micro-batch first)."""
        work = [(tracker.name, tracker.device_work()) for tracker in [self.loss_tracker] + self.output_trackers]
        for shape, metrics, weighted in zip(output_shapes, self.output_metrics, self.output_weighted_metrics):
            work += [(m.name, m.device_work(shape)) for m in metrics + weighted]
        return work

    def loss(self, y_true, y_pred):
        """The scalar to minimise, ``sum(weight * loss)`` over the outputs, and each output's loss."""
        y_true, sample_weight = sample_weights.unpack(y_true)
        ys, preds = (y_true, y_pred) if isinstance(y_pred, list) else ([y_true], [y_pred])
        total, parts = None, []
        for fn, weight, y, pred in zip(self.losses, self.weights, ys, preds):
            if fn is None:
                continue
            value = fn(y, pred, sample_weight)
            parts.append(None if is_symbolic(value.data) else float(value.data))  # no value in a shape-only trace
            if weight != 1.0:
                value = ops.mul(value, np.float32(weight))
            total = value if total is None else ops.add(total, value)
        return total, parts

    def update(self, loss_value, y_true, y_pred) -> None:
        batch = len(y_pred[0] if isinstance(y_pred, list) else y_pred)
        self.update_losses(getattr(loss_value, "per_output", []), loss_value, batch)
        self.update_metrics(y_true, y_pred)

    def update_losses(self, parts, loss_value, batch) -> None:
        """The ``loss`` metric and, with several outputs, each output's loss metric, by a batch of ``batch`` samples."""
        self.loss_tracker.update_state(loss_value, sample_weight=batch)
        for tracker, part in zip(self.output_trackers, parts if len(parts) > 1 else []):
            tracker.update_state(part, sample_weight=batch)

    def update_metrics(self, y_true, y_pred) -> None:
        y_true, sample_weight = sample_weights.unpack(y_true)  # for the weighted metrics only, as in Keras
        ys, preds = (y_true, y_pred) if isinstance(y_pred, list) else ([y_true], [y_pred])
        for metrics, weighted, y, pred in zip(self.output_metrics, self.output_weighted_metrics, ys, preds):
            for m in metrics:
                m.update_state(y, pred)
            for m in weighted:
                m.update_state(y, pred, sample_weight=sample_weight)

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
