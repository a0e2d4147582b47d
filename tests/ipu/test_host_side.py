"""The host as a part of its own (issue 20): the front end's cost per execution, and a simulated input pipeline
that can leave the IPU waiting. Times are derived from the same run's timeline and hardware.HostSpec's figures,
never written down here."""

import pytest
from ipu_test_helpers import configure, data, fit, ipu_model

from ipu_teach import bsp, hardware, ipu
from ipu_teach.ipu.executor import IPUExecutor

X, Y = data(256)
BATCH = 32
SPE = 8


def _executable(num_ipus=1):
    configure(num_ipus)
    model = ipu_model(steps_per_execution=SPE)
    fit(model, X, Y, BATCH)
    return model.get_ipu_executable("train")


def _wait_rows(timeline):
    return [r for r, kind in enumerate(timeline.kinds) if kind == "host wait"]


def test_an_execution_costs_the_host_call_of_its_front_end_beside_the_device_program():
    executable = _executable()
    call = bsp.CostEngine(bsp.HostCall("keras"), executable.graph.spec).run().seconds()
    assert call == pytest.approx(hardware.HOST.execution_overhead_s)
    assert executable.seconds_per_execution == pytest.approx(call + executable.timeline.seconds(), rel=1e-12)
    assert "host call" not in executable.timeline.kinds  # host time between executions is not in the device profile


def test_the_front_end_is_named_and_checked():
    assert IPUExecutor(None).host_api == "keras"
    assert IPUExecutor(None, host_api="poptorch").host_api == "poptorch"
    with pytest.raises(ValueError, match=r"host API 'popxl' is not one of \('keras', 'custom_loop', 'poptorch'\)"):
        IPUExecutor(None, host_api="popxl")


def test_a_slow_input_pipeline_makes_the_ipu_wait_for_the_host(capsys):
    fast = _executable()
    # the pipeline works while the device runs a step (streams included) and while the host calls the execution
    window = fast.seconds_per_execution / SPE
    rate = BATCH / (3 * window)  # a pipeline that takes three of those to make one batch
    ipu.host.simulate_input_pipeline(rate)
    slow = _executable()
    rows = _wait_rows(slow.timeline)
    assert len(rows) == 1 and slow.timeline.counts[rows[0]] == SPE
    assert slow.timeline.labels[rows[0]] == "StreamCopyBegin (host late)"
    # host-bound: each step lasts as long as the host takes to make its batch
    assert slow.seconds_per_execution / SPE == pytest.approx(BATCH / rate, rel=1e-5)
    assert slow.seconds_per_execution - fast.seconds_per_execution == pytest.approx(SPE * 2 * window, rel=1e-5)
    assert "is slower than the IPU runs the program" in capsys.readouterr().out


def test_a_pipeline_faster_than_the_device_costs_nothing():
    fast = _executable()
    ipu.host.simulate_input_pipeline(10 * BATCH * SPE / fast.timeline.seconds())
    same = _executable()
    assert not _wait_rows(same.timeline)
    assert same.seconds_per_execution == fast.seconds_per_execution


def test_replicas_share_the_input_pipeline():
    """Two replicas take two batches per step from one host pipeline."""
    two = _executable(num_ipus=2)
    window = two.seconds_per_execution / (SPE // 2)  # a step of both replicas and its share of the host's call
    ipu.host.simulate_input_pipeline(2 * BATCH / (2 * window))  # two batches in two windows
    slow = _executable(num_ipus=2)
    assert slow.seconds_per_execution / (SPE // 2) == pytest.approx(2 * window, rel=1e-5)


@pytest.mark.parametrize("bad", [0, -5.0, float("inf"), float("nan"), "fast", True])
def test_the_pipeline_rate_is_checked(bad):
    with pytest.raises(ValueError, match=r"simulate_input_pipeline: samples_per_second must be a positive number"):
        ipu.host.simulate_input_pipeline(bad)


def test_resetting_the_system_gives_back_a_host_that_keeps_up():
    ipu.host.simulate_input_pipeline(100)
    ipu.system.reset()
    assert ipu.host.input_pipeline_rate() is None


def test_the_profile_shows_the_wait_as_stream_copy_begin():
    from ipu_teach.profiling.build import execution_of, program_tree

    ipu.host.simulate_input_pipeline(1_000)  # far slower than any device step here
    slow = _executable()
    assert "StreamCopyBegin" in repr(program_tree(slow.timeline))
    by_kind = execution_of(slow.timeline, slow.graph).cycles_by_kind()
    assert next(iter(by_kind)) == "host wait"  # the largest part of a host-bound step


def test_a_pipelined_run_waits_for_a_late_host_on_every_micro_batch():
    from ipu_teach import keras

    def pipelined_seconds():
        configure(2)
        with ipu.ipu_strategy.IPUStrategy().scope():
            inputs = keras.Input(shape=(X.shape[1],))
            with keras.ipu.PipelineStage(0):
                hidden = keras.layers.Dense(16, activation="relu")(inputs)
            with keras.ipu.PipelineStage(1):
                outputs = keras.layers.Dense(Y.shape[1])(hidden)
            model = keras.Model(inputs, outputs)
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=SPE)
            model.compile("sgd", "mse", steps_per_execution=SPE)
        fit(model, X, Y, BATCH)
        return model.get_ipu_executable("train")

    fast = pipelined_seconds().seconds_per_execution
    rate = 1_000  # BATCH samples take 32 ms, far longer than a micro-batch on the device
    ipu.host.simulate_input_pipeline(rate)
    executable = pipelined_seconds()
    slow = executable.seconds_per_execution
    # the Engine's run of the pipelined program holds the waits: one before each micro-batch's infeed
    timeline = executable.timeline
    assert executable.pipeline.execution is timeline
    assert sum(int(timeline.counts[r]) for r in _wait_rows(timeline)) == SPE
    assert slow > fast
    # host-bound: every micro-batch lasts as long as the host takes to make it, the device's work and the host's
    # call hidden behind
    assert slow == pytest.approx(SPE * BATCH / rate, rel=1e-6)


def test_explain_names_the_time_spent_waiting_for_the_host():
    ipu.host.simulate_input_pipeline(1_000)
    slow = _executable()
    waits = sum(int(slow.timeline.counts[r] * slow.timeline.sync[r, 0]) for r in _wait_rows(slow.timeline))
    [line] = [line for line in slow.explain().splitlines() if "waiting for a late host" in line]
    assert int(line.split()[-5].replace(",", "")) == waits > 0


def test_loading_in_the_callers_thread_adds_to_every_execution_however_fast_the_device():
    fast = _executable()
    rate = 1e7  # faster than the device: beside the device it would cost nothing
    ipu.host.simulate_input_pipeline(rate, overlapped=False)
    alongside = _executable()
    assert not _wait_rows(alongside.timeline)  # the device program is unchanged: the caller loads between calls
    assert alongside.timeline.seconds() == fast.timeline.seconds()
    assert SPE * BATCH / rate < fast.timeline.seconds()
    # counted in whole cycles of the IPU's clock
    assert alongside.seconds_per_execution - fast.seconds_per_execution == pytest.approx(SPE * BATCH / rate, abs=1e-9)


def test_loading_in_the_callers_thread_counts_every_replicas_samples():
    one = _executable()
    ipu.host.simulate_input_pipeline(1_000, overlapped=False)
    loaded = _executable()
    assert loaded.seconds_per_execution - one.seconds_per_execution == pytest.approx(SPE * BATCH / 1_000, rel=1e-6)
    ipu.host.simulate_input_pipeline(None)
    two = _executable(num_ipus=2)
    ipu.host.simulate_input_pipeline(1_000, overlapped=False)
    loaded_two = _executable(num_ipus=2)
    # SPE // 2 steps per replica, each taking one batch per replica: the same SPE batches per execution
    assert loaded_two.seconds_per_execution - two.seconds_per_execution == pytest.approx(SPE * BATCH / 1_000, rel=1e-6)


@pytest.mark.parametrize("bad", [0, 1, "no", None])
def test_overlapped_is_checked(bad):
    with pytest.raises(ValueError, match=r"simulate_input_pipeline: overlapped must be True or False"):
        ipu.host.simulate_input_pipeline(100, overlapped=bad)
