"""Timeline pictures and the Chrome-trace export."""

import json
import subprocess
import sys

import numpy as np
import pytest

from ipu_teach import bsp
from ipu_teach.bsp import figures, trace
from ipu_teach.hardware import TEACHING_IPU as T


@pytest.fixture
def timeline():
    compute = bsp.ComputeSuperstep(
        bsp.CostedComputeSet("work", np.arange(T.tiles) * 10), bsp.Exchange(np.full(T.tiles, 8))
    )
    program = bsp.Sequence(bsp.HostToDevice(1_024), bsp.Repeat(3, compute), bsp.DeviceToHost(64))
    return bsp.CostEngine(program, T, ipus=2).run()


def test_phase_intervals_tile_the_time_axis(timeline):
    intervals = timeline.phase_intervals(ipu=1, limit=100)
    starts = np.concatenate([s for s, _ in intervals.values()])
    widths = np.concatenate([w for _, w in intervals.values()])
    starts, widths = starts[widths > 0], widths[widths > 0]
    order = np.argsort(starts, kind="stable")
    ends = starts[order] + widths[order]
    assert (starts[order][1:] == ends[:-1]).all()
    assert ends[-1] == timeline.ipu_cycles()[1]


def test_plot_timeline_draws_phases_and_tiles(timeline):
    import matplotlib

    matplotlib.use("Agg")
    figure = figures.plot_timeline(timeline, ipu=0)
    phases, tiles = figure.axes
    assert {text.get_text() for text in phases.get_legend().get_texts()} == {"sync", "exchange", "compute"}
    heights = [patch.get_height() for patch in tiles.patches]
    np.testing.assert_allclose(heights, timeline.tile_busy[0] / timeline.total_cycles())
    with pytest.raises(ValueError, match="ipu 5 does not exist; the timeline has 2 IPU"):
        figures.plot_timeline(timeline, ipu=5)
    matplotlib.pyplot.close("all")


def test_chrome_trace_events_follow_execution_order(timeline):
    events = trace.chrome_trace_events(timeline)
    spans = [e for e in events if e["ph"] == "X" and e["pid"] == 0]
    assert [e["name"] for e in spans if e["cat"] == "compute"] == ["work"] * 3
    assert {"name", "ph", "ts", "dur", "pid", "tid"} <= set(spans[0])
    last = max(spans, key=lambda e: e["ts"])
    assert last["ts"] + last["dur"] == pytest.approx(timeline.ipu_cycles()[0] / T.clock_hz * 1e6)
    assert {e["pid"] for e in events} == {0, 1}
    assert len(trace.chrome_trace_events(timeline, max_supersteps=2)) < len(events)


def test_write_chrome_trace_is_valid_json_and_leaves_no_temp_files(timeline, tmp_path):
    path = trace.write_chrome_trace(timeline, tmp_path / "run.json")
    payload = json.loads((tmp_path / "run.json").read_text())
    assert path.endswith("run.json")
    assert payload["otherData"]["total_cycles"] == timeline.total_cycles() and payload["otherData"]["simulated"]
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_trace_of_a_long_loop_shows_its_first_supersteps_and_says_it_is_cut(tmp_path, capsys):
    step = bsp.ComputeSuperstep(bsp.CostedComputeSet("work", np.full(T.tiles, 10)))
    timeline = bsp.CostEngine(bsp.Sequence(bsp.HostToDevice(64), bsp.Repeat(10**12, step)), T).run()
    events = trace.chrome_trace_events(timeline, max_supersteps=5)
    assert [e["name"] for e in events if e["ph"] == "X" and e["cat"] == "sync"] == ["host->device"] + ["work"] * 4
    assert events[0]["args"]["name"].endswith("simulated; first 5 of 1,000,000,000,001 supersteps)")
    trace.write_chrome_trace(timeline, tmp_path / "run.json", max_supersteps=5)
    other = json.loads((tmp_path / "run.json").read_text())["otherData"]
    assert (other["supersteps_traced"], other["supersteps_total"], other["truncated"]) == (5, 10**12 + 1, True)
    assert "the first 5 of 1,000,000,000,001 supersteps (cap max_supersteps=5)" in capsys.readouterr().out
    with pytest.raises(ValueError, match="max_supersteps must be a positive integer, got 0"):
        trace.chrome_trace_events(timeline, max_supersteps=0)


def test_an_uncut_trace_says_nothing_of_a_cut(timeline, tmp_path, capsys):
    events = trace.chrome_trace_events(timeline)
    assert all("first" not in e["args"]["name"] for e in events if e["name"] == "process_name")
    trace.write_chrome_trace(timeline, tmp_path / "run.json")
    assert json.loads((tmp_path / "run.json").read_text())["otherData"]["truncated"] is False
    assert capsys.readouterr().out == ""


HANG_SECONDS = 120  # generous: the fixed code answers at once, the old one counted 10**15 empty iterations


def test_loops_that_run_no_superstep_cost_nothing_to_trace(tmp_path):
    """Each case ran forever before (the trace counted out every iteration of an empty loop)."""
    code = f"""
from ipu_teach import bsp
from ipu_teach.bsp import trace
from ipu_teach.hardware import TEACHING_IPU as T
step = bsp.ComputeSuperstep(bsp.CostedComputeSet("work", [10] * T.tiles))
for program in (bsp.Repeat(10**15, bsp.Sequence()), bsp.Sequence(bsp.Repeat(10**15, bsp.Repeat(0, step)), step)):
    timeline = bsp.CostEngine(program, T).run()
    events = trace.chrome_trace_events(timeline)
    trace.write_chrome_trace(timeline, {str(tmp_path / "t.json")!r})
    print(timeline.supersteps, sum(e["ph"] == "X" for e in events), timeline.phase_intervals(0, 60)["sync"][0].size)
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n") == ["0 0 0", "1 2 1", ""]
