"""The host's side next to the IPUs' (issue 21): every event comes from what the executor costs, so the lines add
up to the executable's seconds, a late input pipeline shows as waits, loading in the caller's thread on the host."""

import doctest

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model

from ipu_teach import ipu
from ipu_teach.ipu import system_analyser

HOST = "host: Keras (train)"


def trained(steps_per_execution=2, replicas=1, samples=16):
    configure(replicas)
    model = ipu_model(steps_per_execution=steps_per_execution)
    x, y = data(samples)
    model.fit(x, y, batch_size=4, verbose=0)
    return model


def lane(timeline, name, execution=None):
    return [e for e in timeline.events if e.lane == name and execution in (None, e.execution)]


def test_the_host_line_is_the_call_then_engine_run_back_to_back_and_adds_up_to_the_executions():
    model = trained()
    executable = model.get_ipu_executable()
    timeline = system_analyser.host_timeline(model, executions=3)
    host = lane(timeline, HOST)
    assert [e.label for e in host] == ["host call (Keras)", "Engine::run"] * 3
    assert host[0].start == 0 and all(a.end == pytest.approx(b.start) for a, b in zip(host, host[1:]))
    assert host[-1].end == pytest.approx(timeline.elapsed) == pytest.approx(3 * executable.seconds_per_execution)
    assert host[1].duration == pytest.approx(executable.timeline.seconds())
    assert host[0].duration == pytest.approx(executable.seconds_per_execution - executable.timeline.seconds())


def test_each_ipu_line_is_its_supersteps_merged_by_kind_inside_engine_run():
    model = trained(steps_per_execution=4, replicas=2, samples=32)
    executable = model.get_ipu_executable()
    timeline = system_analyser.host_timeline(model, executions=2)
    assert timeline.lanes == (HOST, "IPU 0", "IPU 1")
    runs = [e for e in lane(timeline, HOST) if e.label == "Engine::run"]
    per_ipu = executable.timeline.ipu_cycles() / executable.timeline.spec.clock_hz
    for ipu_index in range(2):
        for execution, run in enumerate(runs):
            events = lane(timeline, f"IPU {ipu_index}", execution)
            assert sum(e.duration for e in events) == pytest.approx(per_ipu[ipu_index])
            assert events[0].start == pytest.approx(run.start) and events[-1].end <= run.end + 1e-12
            assert all(a.end == pytest.approx(b.start) or a.end < b.start for a, b in zip(events, events[1:]))
            assert all(a.label != b.label for a, b in zip(events, events[1:]))  # merged by kind
    labels = [e.label for e in lane(timeline, "IPU 0", 0)]
    assert labels.count("StreamCopy host->device") == 4 and labels.count("StreamCopy device->host") == 4
    assert "IPU-Link copies" in labels  # the replicas' all-reduce


def test_a_late_input_pipeline_shows_as_waits_before_the_infeed_and_a_fast_one_does_not():
    ipu.host.simulate_input_pipeline(samples_per_second=2_000)
    model = trained()
    timeline = system_analyser.host_timeline(model, executions=1)
    waits = [e for e in lane(timeline, "IPU 0") if e.label == "StreamCopyBegin (host late)"]
    assert len(waits) == 2  # one per step
    (expected,) = ipu.host.late_host_waits(4, 0.0, 2_000)  # the bound: making 4 samples at 2,000/s
    assert all(0 < e.duration < expected.seconds for e in waits)
    ipu.host.simulate_input_pipeline(samples_per_second=1e9)
    fast = trained()
    assert not any(e.label.startswith("StreamCopyBegin") for e in system_analyser.host_timeline(fast).events)


def test_loading_in_the_callers_thread_is_on_the_host_line_before_the_call():
    ipu.host.simulate_input_pipeline(samples_per_second=1_000, overlapped=False)
    model = trained(steps_per_execution=2)
    host = lane(system_analyser.host_timeline(model, executions=1), HOST)
    assert [e.label for e in host] == ["loading in the caller's thread", "host call (Keras)", "Engine::run"]
    assert host[0].duration == pytest.approx(8 / 1_000)  # 2 steps of 4 samples at 1,000 samples/s


def test_the_summary_gives_counts_times_and_shares_per_line():
    model = trained()
    timeline = system_analyser.host_timeline(model, executions=2)
    text = timeline.summary()
    rows = {tuple(line[:61].split(None, 2)[:1] + [line[21:61].strip()]): line for line in text.splitlines()[1:-1]}
    host_call = rows[("host:", "host call (Keras)")]
    call_seconds = sum(e.duration for e in timeline.events if e.label == "host call (Keras)")
    assert host_call.split()[-3] == "2" and host_call.split()[-2] == f"{call_seconds * 1e6:,.1f}"
    assert host_call.split()[-1] == f"{call_seconds / timeline.elapsed:.1%}"
    assert text.splitlines()[-1] == f"elapsed: {timeline.elapsed * 1e6:,.1f} us simulated"


def test_a_very_long_execution_is_cut_and_says_so(monkeypatch):
    model = trained(steps_per_execution=4)
    monkeypatch.setattr(system_analyser, "MAX_SUPERSTEPS", 5)
    timeline = system_analyser.host_timeline(model, executions=1)
    assert timeline.truncated and timeline.summary().endswith("(IPU lines cut)")
    assert sum(e.duration for e in lane(timeline, "IPU 0")) < model.get_ipu_executable().timeline.seconds()


@pytest.mark.parametrize("executions", [0, 101, 1.5, True])
def test_a_bad_number_of_executions_is_refused(executions):
    model = trained()
    with pytest.raises(ValueError, match=f"executions must be a whole number from 1 to 100, got {executions!r}"):
        system_analyser.host_timeline(model, executions=executions)


def test_a_mode_not_run_says_which_call_to_make():
    model = trained()
    with pytest.raises(ValueError, match="has no 'predict' executable since it was last compiled: call predict"):
        system_analyser.host_timeline(model, "predict")


def test_the_figure_has_a_row_per_line_and_spans_the_elapsed_time():
    import matplotlib.pyplot as plt

    model = trained(replicas=2)
    timeline = system_analyser.host_timeline(model)
    figure = timeline.plot()
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_yticklabels()] == list(timeline.lanes)
    assert axes.get_xlim() == pytest.approx((0, timeline.elapsed * 1e6))
    drawn = sum(len(c.get_paths()) for c in axes.collections)
    assert drawn == len(timeline.events)
    assert np.isclose(sum(e.duration for e in timeline.events if e.lane == HOST), timeline.elapsed)
    plt.close(figure)


def test_the_chrome_trace_has_a_process_per_line_and_every_event_in_microseconds(tmp_path):
    import json

    model = trained(replicas=2)
    timeline = system_analyser.host_timeline(model, executions=2)
    path = timeline.write_chrome_trace(tmp_path / "host.json")
    with open(path) as file:
        events = json.load(file)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    assert names == {0: f"{HOST} (simulated)", 1: "IPU 0 (simulated)", 2: "IPU 1 (simulated)"}
    spans = [e for e in events if e["ph"] == "X"]
    assert len(spans) == len(timeline.events)
    for span, event in zip(spans, timeline.events):
        assert names[span["pid"]] == f"{event.lane} (simulated)" and span["name"] == event.label
        assert span["ts"] == pytest.approx(event.start * 1e6) and span["dur"] == pytest.approx(event.duration * 1e6)


def test_module_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(system_analyser, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
