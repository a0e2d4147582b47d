"""Reading reports: the text summary, the comparison of two reports, the Chrome trace."""

import json

import numpy as np
from profiling_helpers import configure, fit

from ipu_teach import profiling


def test_summary_shows_target_memory_liveness_and_cycles(trained):
    _, report = trained
    text = profiling.profile_summary(report)
    execution = report.execution
    assert f"{report.compilation.target.numTiles:,} tiles" in text
    for category in report.compilation.categories:
        assert category in text
    peak = report.compilation.live_peak(0)
    assert f"at step {peak.index} `{peak.name}`" in text
    assert f"{execution.total_cycles():,} cycles" in text and "simulated" in text


def test_comparison_gives_source_target_and_difference(tmp_path):
    configure()
    with profiling.auto_report(tmp_path):
        fit(batch_size=8)
        small = profiling.open_report(profiling.last_report_path())
        fit(batch_size=16)
        large = profiling.open_report(profiling.last_report_path())
    rows = {row.name: row for row in profiling.comparison_rows(small, large)}
    activations = rows["memory: role activations (bytes)"]
    assert activations.target > activations.source
    assert activations.difference == activations.target - activations.source
    assert rows["memory: role variables (bytes)"].difference == 0  # same weights
    assert rows["memory: always-live variables (bytes)"].difference == 0
    assert rows["memory: not-always-live variables (bytes)"].difference > 0
    totals = [int(r.compilation.tile_memory(0).sum()) for r in (small, large)]
    assert [rows["memory: total (bytes)"].source, rows["memory: total (bytes)"].target] == totals
    assert rows["execution: cycles"].source == small.execution.total_cycles()
    text = profiling.compare_reports(small, large)
    assert "source" in text and "target" in text and "difference" in text
    assert f"+{activations.difference:,}" in text


def test_chrome_trace_holds_every_superstep_of_the_execution(trained, tmp_path):
    _, report = trained
    path = profiling.write_chrome_trace(report, tmp_path / "trace.json")
    events = json.loads(open(path).read())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    cycles = sum(e["args"]["cycles"] for e in spans if e["pid"] == 0)
    assert cycles == report.execution.total_cycles()
    end = max(e["ts"] + e["dur"] for e in spans)
    assert np.isclose(end, report.execution.total_cycles() / report.execution.clockFrequency * 1e6)
    assert {e["cat"] for e in spans} == {"compute", "sync", "exchange"}
