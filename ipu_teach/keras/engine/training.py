"""The loops behind ``fit``, ``evaluate`` and ``predict``.

Steps are grouped into *executions* of ``steps_per_execution`` steps, and an executor runs each
execution: on the host CPU (numpy, wall-clock time) by default, or on the simulated IPU when the
model was compiled in an ``IPUStrategy`` scope (simulated time). The loop itself does not care
which: it reports progress and calls callbacks once per execution, as Keras does, or once per step from a
polling thread beside the executions when the executor's plan says so (Graphcore's asynchronous callbacks,
:mod:`.polling_thread`).
"""

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import callbacks as callbacks_module
from ..progbar import Progbar
from . import polling_thread, shape_only_weights, step_overrides
from .data_adapter import get_data_adapter, split_validation, unpack_validation_data


@dataclass
class ExecutionPlan:
    """How an executor will run a pass: steps per execution, steps per epoch (per replica; None if
    unknown), replicas (each step takes one batch per replica) and a notice to show each epoch."""

    steps_per_execution: int
    steps: Optional[int]
    replicas: int = 1
    epoch_notice: Optional[Callable] = None
    callback_seconds_per_step: Optional[float] = None
    """Set when the callbacks run once per step on a polling thread beside the executions (Graphcore's
    asynchronous callbacks): the host's work per step. None: once per execution, as Keras. An executor
    that sets it has ``step_arrivals(mode, seconds)``: when each step of an execution reaches the host."""


def step_log(model, mode, result) -> dict:
    """The logs a step's ``on_*_batch_end`` gets: the metrics so far, or a predict step's ``outputs``."""
    return {"outputs": result} if mode == "predict" else step_overrides.logs(model, mode)


class CPUExecutor:
    """Runs each step with numpy on the host; the time it reports is wall-clock."""

    time_note = ""

    def prepare(self, model, mode, adapter) -> ExecutionPlan:
        """Nothing to compile on the CPU."""
        shape_only_weights.check_runnable(model)
        return ExecutionPlan(model.steps_per_execution, adapter.steps)

    def run(self, model, mode, batches, step_logs=None):
        """Runs ``batches``; appends each step's logs to ``step_logs`` when it is a list."""
        step = step_overrides.runner(model, mode)
        start = time.perf_counter()
        results = []
        for x, y in batches:
            results.append(step(x, y))
            if step_logs is not None:
                step_logs.append(step_log(model, mode, results[-1]))
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


_STOP_FLAG = {"train": "stop_training", "test": "stop_evaluating", "predict": "stop_predicting"}
"""Each loop stops on its own flag, as in Keras 3: a fit ended by EarlyStopping leaves
``stop_training`` set, and the next ``evaluate`` still runs every batch."""

_FUNCTION = {"fit": "train_function", "evaluate": "test_function", "predict": "predict_function"}


def _check_data(model, adapter, with_labels, what):
    """Shapes and labels are checked on the first batch, before any step runs."""
    x, y = adapter.first_batch()
    if x is None or adapter.num_samples == 0:
        logs = "Empty batch_outputs" if what == "predict" else "Empty logs"
        raise ValueError(
            f"Unexpected result of `{_FUNCTION[what]}` ({logs}): {what} was given no data "
            f"({'the dataset is empty' if adapter.dataset is not None else 'x has 0 samples'}); "
            "pass at least one sample"
        )
    model.check_input_data(x)
    with_labels = with_labels and not step_overrides.overridden(model, "train" if what == "fit" else "test")
    if with_labels and y is None:
        raise ValueError("fit/evaluate need labels: pass y=... (or a Dataset of (x, y) pairs)")
    if with_labels:  # every label of arrays (a bad one late in the data would fail mid-training), else the first batch
        model.check_labels(y if adapter.dataset is not None else adapter.y)


def fit(
    model,
    x=None,
    y=None,
    batch_size=None,
    epochs=1,
    verbose="auto",
    callbacks=None,
    validation_split=0.0,
    validation_data=None,
    shuffle=True,
    class_weight=None,
    sample_weight=None,
    initial_epoch=0,
    steps_per_epoch=None,
    validation_steps=None,
    validation_batch_size=None,
    validation_freq=1,
):
    """Trains the model for a fixed number of epochs (iterations on a dataset).

    On the simulated IPU (a model compiled in an ``IPUStrategy`` scope) the data is cut into executions
    of ``steps_per_execution`` batches, so the number of batches must divide into them (Graphcore's
    rule, with an error that says what to change); replicas, gradient accumulation and pipelining
    follow ``IPUConfig`` and the model's options. The weights computed are the CPU's.

    Args:
      x: Input data: a numpy array (or a list of them for several inputs), or a ``Dataset`` of
        ``(x, y)`` batches.
      y: Target data, like ``x``; not given when ``x`` is a dataset.
      batch_size: Integer, the number of samples per gradient update (per replica on the IPU).
        Default: None, 32, or ``ceil(n / steps_per_epoch)`` with ``steps_per_epoch``, as in Keras 2.6.
        Ignored when ``x`` is a dataset (its batches are used), as in Keras 2.6.
      epochs: Integer, the number of epochs to train the model. Default: 1.
      verbose: ``"auto"``, 0 (silent), 1 (progress bar) or 2 (one line per epoch). Default: ``"auto"``, 1.
      callbacks: List of ``keras.callbacks.Callback`` instances. Default: None.
      validation_split: Float between 0 and 1, the fraction of the training data held out for
        validation (the last samples, before shuffling). Default: 0.
      validation_data: ``(x_val, y_val)`` to evaluate on at the end of each epoch. Default: None.
      shuffle: Boolean, whether to shuffle the training data before each epoch. Default: True.
      class_weight: Optional dict mapping class indices to a weight for the loss. Default: None.
      sample_weight: Optional numpy array of weights for the training samples. Default: None.
      initial_epoch: Integer, the epoch at which to start training. Default: 0.
      steps_per_epoch: Integer or None, the number of batches per epoch. Default: None, the whole data.
      validation_steps: Integer or None, the number of validation batches. Default: None.
      validation_batch_size: Integer or None, the validation batch size. Default: None, ``batch_size``.
      validation_freq: Integer, validate every ``validation_freq`` epochs. Default: 1.

    Returns:
      A ``History`` object: its ``history`` attribute records the loss and metric values per epoch.

    Raises:
      RuntimeError: if the model was never compiled.
      ipu.IPURuleError: on the IPU, if the data does not divide into executions (the message says how).

    Example:

    >>> keras.utils.set_random_seed(0)
    >>> model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
    >>> model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
    >>> x, y = np.ones((8, 4), np.float32), keras.utils.to_categorical(np.zeros(8), 2)
    >>> history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    >>> sorted(history.history), len(history.history["loss"])
    (['accuracy', 'loss'], 2)
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    model.assert_compiled("fit")
    y = model.labels_in_output_order(y)
    val_weight = None
    if validation_split and validation_data is None:
        (x, y), validation_data = split_validation(x, y, validation_split)
        if sample_weight is not None:
            cut = len(y[0] if isinstance(y, list) else y)
            sample_weight, val_weight = sample_weight[:cut], sample_weight[cut:]
    adapter = get_data_adapter(
        x,
        y,
        batch_size,
        steps_per_epoch,
        shuffle=shuffle,
        what="fit",
        sample_weight=sample_weight,
        class_weight=class_weight,
        passes=epochs - initial_epoch,
    )
    _check_data(model, adapter, with_labels=True, what="fit")
    if validation_data is not None:
        val_x, val_y, given_weight = unpack_validation_data(validation_data)
        val_y, val_weight = model.labels_in_output_order(val_y), val_weight if given_weight is None else given_weight
        # Keras 2.6: validation_batch_size or the batch_size given (not one worked out from steps_per_epoch)
        val_batch = validation_batch_size or (None if adapter.dataset is not None or val_y is None else batch_size)
        _check_data(
            model,
            get_data_adapter(val_x, val_y, val_batch, validation_steps, what="fit (validation_data)"),
            with_labels=True,
            what="fit",
        )
    verbose = _verbosity(verbose)
    executor = model.executor()
    plan = executor.prepare(model, "train", adapter)

    history = callbacks_module.History()
    params = {"verbose": verbose, "epochs": epochs, "steps": plan.steps}
    cbs = callbacks_module.CallbackList(
        list(callbacks or []) + [history], model, params
    )  # last, as in Keras: it sees what callbacks log
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
        bar = Progbar(plan.steps, verbose=verbose, time_note=executor.time_note)
        epoch_logs, done, elapsed = _run_epoch(model, executor, plan, "train", adapter, bar, cbs)
        adapter.on_epoch_end()
        if adapter.ran_out and not epoch_logs:  # the data ended exactly with the last epoch
            break
        logs = epoch_logs  # an epoch cut short by the data still ends (validation, callbacks), as in Keras
        if validation_data is not None and (epoch + 1) % validation_freq == 0:
            val_logs = _evaluate(
                model,
                get_data_adapter(val_x, val_y, val_batch, validation_steps, what="evaluate", sample_weight=val_weight),
                verbose=0,
                callbacks=cbs,
                in_fit=True,
            )
            logs.update({f"val_{k}": v for k, v in val_logs.items()})
        bar.update(done, list(logs.items()), elapsed, finalize=True)  # Keras ends the line with the val_ values
        history.epoch_timings.append((bar.seconds, bar.seconds_per_step))  # what the line showed
        cbs.on_epoch_end(epoch, logs)
        if model.stop_training or adapter.ran_out:
            break
    cbs.on_train_end(logs)
    history.model = model
    history.params = params
    model.history = history  # Keras keeps the last fit's History on the model
    return history


_HOOKS = {
    "train": ("on_train_batch_begin", "on_train_batch_end"),
    "test": ("on_test_batch_begin", "on_test_batch_end"),
    "predict": ("on_predict_batch_begin", "on_predict_batch_end"),
}


def _run_epoch(model, executor, plan, mode, adapter, bar, cbs, collect=None):
    """One pass over the data, execution by execution; returns the logs (running means), the steps
    done and the time they took. The caller ends the progress line."""
    hooks = _HOOKS[mode]
    batches = adapter.batches()
    if plan.steps is not None:  # batches that do not fill a step of every replica are dropped
        batches = itertools.islice(batches, plan.steps * plan.replicas)
    done, elapsed, logs = 0, 0.0, {}
    polling = None  # callbacks once per execution, as Keras; once per step from Graphcore's polling thread
    if plan.callback_seconds_per_step is not None:
        polling = polling_thread.PollingThread(executor, plan, mode, hooks, cbs, bar)
    setattr(model, _STOP_FLAG[mode], False)
    for group in _executions(batches, plan.steps_per_execution * plan.replicas):
        step_logs = [] if polling else None
        if not polling:
            getattr(cbs, hooks[0])(done)
        results, seconds = executor.run(model, mode, group, step_logs)
        if collect is not None:
            collect.extend(results)
        if polling:
            logs = polling.run(done, elapsed, seconds, step_logs)
        elapsed += seconds
        done += len(group) // plan.replicas
        if not polling:
            logs = step_overrides.logs(model, mode) if mode != "predict" else {}
            getattr(cbs, hooks[1])(done - 1, logs)
            bar.update(done, list(logs.items()), elapsed, finalize=False)
        if getattr(model, _STOP_FLAG[mode]):
            break
    return dict(logs), done, max(elapsed, polling.free_at if polling else 0.0)  # the pass joins the polling thread


def evaluate(
    model,
    x=None,
    y=None,
    batch_size=None,
    verbose="auto",
    sample_weight=None,
    steps=None,
    callbacks=None,
    return_dict=False,
):
    """Returns the loss value and metrics values for the model in test mode.

    On the simulated IPU it runs the model's "test" executable, compiled for ``steps_per_execution``
    batches per execution like ``fit`` (a count larger than the batches available is truncated with a
    warning, as in Graphcore's Keras).

    Args:
      x: Input data: a numpy array, a list of them, or a ``Dataset`` of ``(x, y)`` batches.
      y: Target data, like ``x``; not given when ``x`` is a dataset.
      batch_size: Integer, the number of samples per batch. Default: None, 32, or ``ceil(n / steps)`` with
        ``steps``, as in Keras 2.6. Ignored when ``x`` is a dataset.
      verbose: ``"auto"``, 0 (silent) or 1 (progress bar). Default: ``"auto"``, 1.
      sample_weight: Optional numpy array of weights for the test samples. Default: None.
      steps: Integer or None, the number of batches to evaluate. Default: None, all of them.
      callbacks: List of ``keras.callbacks.Callback`` instances. Default: None.
      return_dict: If True, return a dict of names to values instead of a list. Default: False.

    Returns:
      The scalar test loss (with no metrics), or a list ``[loss, metric, ...]`` in the order of
      ``model.metrics_names``, or a dict if ``return_dict``.

    Example:

    >>> keras.utils.set_random_seed(0)
    >>> model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
    >>> model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"])
    >>> x, y = np.ones((8, 4), np.float32), keras.utils.to_categorical(np.zeros(8), 2)
    >>> loss, accuracy = model.evaluate(x, y, batch_size=4, verbose=0)
    >>> round(accuracy, 2)
    1.0
    """
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    model.assert_compiled("evaluate")
    adapter = get_data_adapter(
        x, model.labels_in_output_order(y), batch_size, steps, what="evaluate", sample_weight=sample_weight
    )
    logs = _evaluate(model, adapter, _verbosity(verbose), callbacks)
    if return_dict:
        return logs
    values = list(logs.values())
    return values[0] if len(values) == 1 else values


def _evaluate(model, adapter, verbose, callbacks, in_fit=False):
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    _check_data(model, adapter, with_labels=True, what="evaluate")
    executor = model.executor()
    plan = executor.prepare(model, "test", adapter)
    cbs = (
        callbacks
        if isinstance(callbacks, callbacks_module.CallbackList)
        else callbacks_module.CallbackList(callbacks, model, {"verbose": verbose, "steps": plan.steps})
    )  # fit's validation: fit's callbacks see it
    model.reset_metrics()
    cbs.on_test_begin()
    if plan.epoch_notice and not in_fit:
        plan.epoch_notice()
    bar = Progbar(plan.steps, verbose=verbose, time_note=executor.time_note)
    logs, done, elapsed = _run_epoch(model, executor, plan, "test", adapter, bar, cbs)
    bar.update(done, list(logs.items()), elapsed, finalize=True)
    cbs.on_test_end(logs)
    return logs


def predict(model, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    adapter = get_data_adapter(x, None, batch_size, steps, what="predict")
    _check_data(model, adapter, with_labels=False, what="predict")
    executor = model.executor()
    plan = executor.prepare(model, "predict", adapter)
    verbose = _verbosity(verbose)
    cbs = callbacks_module.CallbackList(callbacks, model, {"verbose": verbose, "steps": plan.steps})
    outputs = []
    cbs.on_predict_begin()
    if plan.epoch_notice:
        plan.epoch_notice()
    bar = Progbar(plan.steps, verbose=verbose, time_note=executor.time_note)
    _, done, elapsed = _run_epoch(model, executor, plan, "predict", adapter, bar, cbs, collect=outputs)
    bar.update(done, [], elapsed, finalize=True)
    cbs.on_predict_end()
    if isinstance(outputs[0], list):
        return [np.concatenate(parts) for parts in zip(*outputs)]
    return np.concatenate(outputs)
