"""The solutions of notebook 07's exercises run and print what the exercises ask for."""

import re
import runpy
from pathlib import Path

from ipu_teach.widgets.pipeline import time_pipeline

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


def run(name, capsys):
    runpy.run_path(str(SOLUTIONS / name), run_name="__main__")
    return capsys.readouterr().out


def test_exercise_1_ties_the_overlapping_schedules_when_passes_cost_the_same(capsys):
    out = run("07_exercise_1.py", capsys)
    printed = {
        name: (float(total), int(share), stash)
        for name, total, share, stash in re.findall(
            r"^(.+?) +(\d+) units, utilisation (\d+)%, stash (\[.*\])$", out, re.M
        )
    }
    assert list(printed) == ["GPipe", "1F1B", "Eager 1F1B", "Grouped", "Interleaved", "Sequential"]
    for name, (total, share, stash) in printed.items():  # each row is the simulator's timing of that schedule
        metrics = time_pipeline(name, stages=4, accumulation=16, ratio=1.0).metrics
        assert (total, share, stash) == (
            round(metrics.total_seconds),
            round(100 * metrics.utilisation),
            str(list(metrics.peak_stash)),
        )
    totals = {name: total for name, (total, _, _) in printed.items()}
    assert totals["GPipe"] == totals["1F1B"] == totals["Eager 1F1B"] == totals["Grouped"] == totals["Interleaved"]
    assert totals["Interleaved"] < totals["Sequential"]


def test_exercise_2_counts_the_samples_of_one_poptorch_call(capsys):
    out = run("07_exercise_2.py", capsys)
    assert "one call consumes 5,120 samples" in out and "effective batch 512: 10 weight updates per call" in out
    assert "16 x 10 device iterations x 4 replicas x 8 accumulated" in out
