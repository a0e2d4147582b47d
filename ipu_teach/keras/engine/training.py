"""The loops behind ``fit``, ``evaluate`` and ``predict``.

Steps are grouped into *executions* of ``steps_per_execution`` steps, and an executor runs each
execution: on the host CPU (numpy, wall-clock time) by default, or on the simulated IPU when the
model was compiled in an ``IPUStrategy`` scope (simulated time). The loop itself does not care
which: it reports progress and calls callbacks once per execution, as Keras does.
"""
import itertools
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import callbacks as callbacks_module
from ..progbar import Progbar
from .data_adapter import DataAdapter, split_validation, unpack_validation_data


@dataclass
class Plan:
    """How an executor will run a pass: steps per execution, steps per epoch (per replica; None if
    unknown), replicas (each step takes one batch per replica) and a notice to show each epoch."""

    steps_per_execution: int
    steps: Optional[int]
    replicas: int = 1
    epoch_notice: Optional[Callable] = None


class CPUExecutor:
    """Runs each step with numpy on the host; the time it reports is wall-clock."""

    time_note = ""

    def prepare(self, model, mode, adapter) -> Plan:
        """Nothing to compile on the CPU."""
        return Plan(model.steps_per_execution, adapter.steps)

    def run(self, model, mode, batches):
        step = {"train": model.train_step, "test": model.test_step, "predict": model.predict_step}[mode]
        start = time.perf_counter()
        results = [step(x, y) for x, y in batches]
        return results, time.perf_counter() - start


def _verbosity(verbose):
    return 1 if verbose == "auto" else int(verbose)


def _executions(batches, size):
    group = []
    for batch in batches:
        group.append(batch)
        if len(group) == size:
            yield group
            group = []
    if group:
        yield group


def _check_data(model, adapter, with_labels):
    """Shapes and labels are checked on the first batch, before any step runs."""
    x, y = adapter.first_batch()
    model.check_input_data(x)
    if with_labels and y is None:
        raise ValueError("fit/evaluate need labels: pass y=... (or a Dataset of (x, y) pairs)")
    if with_labels:  # every label of arrays (a bad one late in the data would fail mid-training), else the first batch
        model.check_labels(y if adapter.dataset is not None else adapter.y)


def fit(model, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
        validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
        steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1):
    model.assert_compiled("fit")
    if class_weight is not None or sample_weight is not None:
        raise ValueError("fit: ipu-teach does not support class_weight or sample_weight; leave them as None")
    if validation_split and validation_data is None:
        (x, y), validation_data = split_validation(x, y, validation_split)
    adapter = DataAdapter(x, y, batch_size, steps_per_epoch, shuffle=shuffle, what="fit")
    _check_data(model, adapter, with_labels=True)
    if validation_data is not None:
        val_x, val_y = unpack_validation_data(validation_data)
        _check_data(model, DataAdapter(val_x, val_y, validation_batch_size or (
            None if adapter.dataset is not None else adapter.batch_size), validation_steps,
            what="fit (validation_data)"), with_labels=True)
    verbose = _verbosity(verbose)
    executor = model.executor()
    plan = executor.prepare(model, "train", adapter)

    history = callbacks_module.History()
    params = {"verbose": verbose, "epochs": epochs, "steps": plan.steps}
    cbs = callbacks_module.CallbackList([history] + list(callbacks or []), model, params)
    model.stop_training = False
    cbs.on_train_begin()
    logs = {}
    for epoch in range(initial_epoch, epochs):
        model.reset_metrics()
        cbs.on_epoch_begin(epoch)
        if plan.epoch_notice:
            plan.epoch_notice()
        if verbose:
            print(f"Epoch {epoch + 1}/{epochs}")
        epoch_logs = _run_epoch(model, executor, plan, "train", adapter, verbose, cbs)
        adapter.on_epoch_end()
        if adapter.ran_out and not epoch_logs:  # the data ended exactly with the last epoch
            break
        logs = epoch_logs  # an epoch cut short by the data still ends (validation, callbacks), as in Keras
        if validation_data is not None and (epoch + 1) % validation_freq == 0:
            val_logs = evaluate(model, val_x, val_y, batch_size=validation_batch_size or
                                (None if adapter.dataset is not None or val_y is None else adapter.batch_size),
                                verbose=0, steps=validation_steps, callbacks=cbs, return_dict=True, _in_fit=True)
            logs.update({f"val_{k}": v for k, v in val_logs.items()})
        cbs.on_epoch_end(epoch, logs)
        if model.stop_training or adapter.ran_out:
            break
    cbs.on_train_end(logs)
    history.model = model
    history.params = params
    model.history = history  # Keras keeps the last fit's History on the model
    return history


def _run_epoch(model, executor, plan, mode, adapter, verbose, cbs, collect=None):
    """One pass over the data, execution by execution; returns the logs (running means)."""
    hooks = {"train": ("on_train_batch_begin", "on_train_batch_end"),
             "test": ("on_test_batch_begin", "on_test_batch_end"),
             "predict": ("on_predict_batch_begin", "on_predict_batch_end")}[mode]
    bar = Progbar(plan.steps, verbose=verbose, time_note=executor.time_note)
    batches = adapter.batches()
    if plan.steps is not None:  # batches that do not fill a step of every replica are dropped
        batches = itertools.islice(batches, plan.steps * plan.replicas)
    done, elapsed, logs = 0, 0.0, {}
    for group in _executions(batches, plan.steps_per_execution * plan.replicas):
        getattr(cbs, hooks[0])(done)
        results, seconds = executor.run(model, mode, group)
        elapsed += seconds
        done += len(group) // plan.replicas
        if collect is not None:
            collect.extend(results)
        logs = model.metric_logs() if mode != "predict" else {}
        getattr(cbs, hooks[1])(done - 1, logs)
        bar.update(done, list(logs.items()), elapsed)
        if mode == "train" and not all(np.isfinite(r) for r in results):
            bad = done - len(group) // plan.replicas + next(i for i, r in enumerate(results) if not np.isfinite(r)) // plan.replicas
            print(f"Batch {bad}: Invalid loss, terminating training")
            model.stop_training = True
            break
        if model.stop_training:
            break
    bar.update(done, list(logs.items()), elapsed, finalize=True)
    return dict(logs)


def evaluate(model, x=None, y=None, batch_size=None, verbose="auto", steps=None, callbacks=None,
             return_dict=False, _in_fit=False):
    model.assert_compiled("evaluate")
    adapter = DataAdapter(x, y, batch_size, steps, what="evaluate")
    _check_data(model, adapter, with_labels=True)
    executor = model.executor()
    plan = executor.prepare(model, "test", adapter)
    verbose = _verbosity(verbose)
    cbs = callbacks if isinstance(callbacks, callbacks_module.CallbackList) else callbacks_module.CallbackList(
        callbacks, model, {"verbose": verbose, "steps": plan.steps})  # fit's validation: fit's callbacks see it
    model.reset_metrics()
    cbs.on_test_begin()
    stop = model.stop_training if _in_fit else False
    if plan.epoch_notice and not _in_fit:
        plan.epoch_notice()
    logs = _run_epoch(model, executor, plan, "test", adapter, verbose, cbs)
    model.stop_training = stop
    cbs.on_test_end(logs)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def predict(model, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
    adapter = DataAdapter(x, None, batch_size, steps, what="predict")
    _check_data(model, adapter, with_labels=False)
    executor = model.executor()
    plan = executor.prepare(model, "predict", adapter)
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, model, {"verbose": verbose, "steps": plan.steps})
    outputs = []
    cbs.on_predict_begin()
    stop, model.stop_training = getattr(model, "stop_training", False), False
    if plan.epoch_notice:
        plan.epoch_notice()
    _run_epoch(model, executor, plan, "predict", adapter, verbose, cbs, collect=outputs)
    model.stop_training = stop
    cbs.on_predict_end()
    if not outputs:
        raise ValueError("predict: no data (the input has no samples)")
    if isinstance(outputs[0], list):
        return [np.concatenate(parts) for parts in zip(*outputs)]
    return np.concatenate(outputs)
