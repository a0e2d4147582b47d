"""``train_on_batch``, ``test_on_batch`` and ``predict_on_batch``: one step on one batch, by the
model's executor (the host CPU, or the simulated IPU inside an IPUStrategy scope)."""

from . import step_overrides
from .data_adapter import get_data_adapter
from .training import _check_data


def run(model, mode, x, y=None, sample_weight=None, class_weight=None, reset_metrics=True, return_dict=False):
    what = {"train": "fit", "test": "evaluate", "predict": "predict"}[mode]
    if mode != "predict":
        model.assert_compiled(what)
        y = model.labels_in_output_order(y)
    rows = len(x[0] if isinstance(x, (list, tuple)) else x)
    adapter = get_data_adapter(
        x,
        y,
        max(rows, 1),
        None,
        what=what,
        sample_weight=sample_weight,  # the whole batch
        class_weight=class_weight,
    )
    _check_data(model, adapter, with_labels=mode != "predict", what=what)
    executor = model.executor()
    executor.prepare(model, mode, adapter)
    if mode != "predict" and reset_metrics:
        model.reset_metrics()
    results, _ = executor.run(model, mode, list(adapter.batches()))
    if mode == "predict":
        return results[0]
    logs = step_overrides.logs(model, mode)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values
