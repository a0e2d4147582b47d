"""model.set_asynchronous_callbacks (Graphcore's Keras, graphcore/keras keras/ipu/extensions/extensions_base.py and
polling_thread.py): callbacks and the progress bar run once per step from a polling thread beside the executions,
ignored for fit/evaluate when the outfeed accumulates; a step shows the slower of the device's step and the host's
work per step (hardware.HostSpec.callback_step_s), the first step left out as Keras' Progbar leaves it out."""

import contextlib
import dataclasses
import io
import re

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu
from ipu_teach.examples import two_stage_model
from ipu_teach.keras.engine import polling_thread

X, Y = data(64)
BATCH = 4
SPE = 8


class Recorder(keras.callbacks.Callback):
    """Every batch hook's call: (hook, batch, logs)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def _record(self, hook):
        return lambda batch, logs=None: self.calls.append((hook, batch, dict(logs or {})))

    def __getattribute__(self, name):
        if name.startswith("on_") and "batch" in name:
            return self._record(name)
        return super().__getattribute__(name)


def _evaluate(model, verbose=0, **kwargs):
    recorder = Recorder()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        model.evaluate(X, Y, batch_size=BATCH, verbose=verbose, callbacks=[recorder], **kwargs)
    return recorder.calls, out.getvalue()


def _ends(calls, hook="on_test_batch_end"):
    return [(batch, logs) for name, batch, logs in calls if name == hook]


def _per_step(line):
    """The time per step a finished progress line shows, in seconds."""
    value, unit = re.search(r" (\d+)(us|ms|s)/step", line).groups()
    return int(value) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def test_callbacks_run_per_step_with_each_steps_logs_as_one_step_per_execution_gives_them():
    configure(1)
    per_execution = ipu_model(steps_per_execution=1)
    expected, _ = _evaluate(per_execution)
    polled = ipu_model(steps_per_execution=SPE)
    polled.set_asynchronous_callbacks(True)
    calls, _ = _evaluate(polled)
    assert [name for name, _, _ in calls] == ["on_test_batch_begin", "on_test_batch_end"] * (len(X) // BATCH)
    assert [batch for _, batch, _ in calls] == [b for b in range(len(X) // BATCH) for _ in range(2)]
    for (batch, logs), (want_batch, want) in zip(_ends(calls), _ends(expected), strict=True):
        assert batch == want_batch and logs.keys() == want.keys()
        np.testing.assert_allclose(list(logs.values()), list(want.values()), rtol=1e-6)


def test_without_it_callbacks_run_once_per_execution():
    configure(1)
    model = ipu_model(steps_per_execution=SPE)
    calls, _ = _evaluate(model)
    assert [(name, batch) for name, batch, _ in calls] == [
        ("on_test_batch_begin", 0),
        ("on_test_batch_end", SPE - 1),
        ("on_test_batch_begin", SPE),
        ("on_test_batch_end", 2 * SPE - 1),
    ]


def test_fit_and_predict_call_per_step_too_predict_with_each_steps_outputs():
    configure(1)
    model = ipu_model(steps_per_execution=SPE)
    model.set_asynchronous_callbacks(True)
    recorder = Recorder()
    history = model.fit(X, Y, batch_size=BATCH, epochs=1, verbose=0, callbacks=[recorder], shuffle=False)
    ends = _ends(recorder.calls, "on_train_batch_end")
    assert [batch for batch, _ in ends] == list(range(len(X) // BATCH))
    assert ends[-1][1]["loss"] == pytest.approx(history.history["loss"][-1])
    recorder.calls.clear()
    predictions = model.predict(X, batch_size=BATCH, verbose=0, callbacks=[recorder])
    outputs = [logs["outputs"] for _, logs in _ends(recorder.calls, "on_predict_batch_end")]
    assert len(outputs) == len(X) // BATCH
    np.testing.assert_array_equal(np.concatenate(outputs), predictions)


def test_each_replica_calls_the_callbacks_with_the_same_step():
    configure(2)
    model = ipu_model(steps_per_execution=SPE // 2)
    model.set_asynchronous_callbacks(True)
    calls, _ = _evaluate(model)
    assert [batch for batch, _ in _ends(calls)] == [b for b in range(len(X) // BATCH // 2) for _ in range(2)]


def _pipelined(accumulate_outfeed):
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = two_stage_model()
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4, accumulate_outfeed=accumulate_outfeed)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=8)
    model.set_asynchronous_callbacks(True)
    return model


@pytest.mark.parametrize("accumulate_outfeed, per_step", [(True, False), (None, True)])
def test_an_accumulating_outfeed_makes_fit_and_evaluate_ignore_it_but_not_predict(accumulate_outfeed, per_step):
    model = _pipelined(accumulate_outfeed)
    x, y = np.ones((16, 4), np.float32), keras.utils.to_categorical(np.zeros(16), 2)
    recorder = Recorder()
    with contextlib.redirect_stderr(io.StringIO()):
        model.fit(x, y, batch_size=2, verbose=0, callbacks=[recorder])
        model.evaluate(x, y, batch_size=2, verbose=0, callbacks=[recorder])
        model.predict(x, batch_size=2, verbose=0, callbacks=[recorder])
    steps = list(range(8)) if per_step else [7]
    assert [batch for batch, _ in _ends(recorder.calls, "on_train_batch_end")] == steps
    assert [batch for batch, _ in _ends(recorder.calls, "on_test_batch_end")] == steps
    assert [batch for batch, _ in _ends(recorder.calls, "on_predict_batch_end")] == list(range(8))


def test_a_step_shows_the_host_work_per_step_when_the_device_is_quicker_and_leaves_out_the_compile():
    configure(1)
    steps = len(X) // BATCH
    model = ipu_model(steps_per_execution=steps)  # one execution: no host call between two
    model.set_asynchronous_callbacks(True)
    _, first = _evaluate(model, verbose=1)  # compiles: the first step's time, left out
    executable = model.get_ipu_executable("test")
    device_step = executable.timeline.seconds() / steps
    assert device_step < hardware.HOST.callback_step_s  # a tiny model: the host is the slower
    assert f"{hardware.HOST.callback_step_s * 1e6:.0f}us/step (simulated)" in first
    assert re.search(r" - (\d+)s ", first).group(1) == f"{executable.compile_seconds:.0f}"


def test_a_step_shows_the_device_step_when_the_host_is_quicker(monkeypatch):
    monkeypatch.setattr(hardware, "HOST", dataclasses.replace(hardware.HOST, callback_step_s=1e-9))
    configure(1)
    steps = len(X) // BATCH
    model = ipu_model(steps_per_execution=steps)
    model.set_asynchronous_callbacks(True)
    _, line = _evaluate(model, verbose=1)
    device_step = model.get_ipu_executable("test").timeline.seconds() / steps
    assert _per_step(line) == pytest.approx(device_step, abs=0.5e-6)


def test_the_polling_thread_carries_its_lag_into_the_next_execution():
    assert polling_thread.completions([1.0, 1.5], seconds_per_step=1.0, free_at=3.0) == [4.0, 5.0]
    assert polling_thread.completions([1.0, 1.5], seconds_per_step=0.25) == [1.25, 1.75]


def test_the_argument_must_be_true_or_false():
    configure(1)
    model = ipu_model()
    with pytest.raises(ValueError, match=r"set_asynchronous_callbacks: asynchronous must be True or False, got 'yes'"):
        model.set_asynchronous_callbacks("yes")


def test_every_executor_gives_each_steps_logs_when_asked():
    """The executors' contract the polling thread relies on: the CPU's gives the same logs as the IPU's."""
    from ipu_teach.keras.engine.training import CPUExecutor

    configure(1)
    batches = [(X[i : i + BATCH], Y[i : i + BATCH]) for i in range(0, 4 * BATCH, BATCH)]
    cpu, ipu_run = ipu_model(steps_per_execution=4), ipu_model(steps_per_execution=4)
    cpu_logs, ipu_logs = [], []
    CPUExecutor().run(cpu, "test", batches, cpu_logs)
    _evaluate(ipu_run)  # compiles the test program
    ipu_run.reset_metrics()
    ipu_run.executor().run(ipu_run, "test", batches, ipu_logs)
    assert len(cpu_logs) == len(ipu_logs) == 4
    for a, b in zip(cpu_logs, ipu_logs, strict=True):
        np.testing.assert_allclose(list(a.values()), list(b.values()), rtol=1e-6)
