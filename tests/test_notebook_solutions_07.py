"""The solutions of notebook 07's exercises run and print what the exercises ask for."""

import runpy
from pathlib import Path

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


def run(name, capsys):
    runpy.run_path(str(SOLUTIONS / name), run_name="__main__")
    return capsys.readouterr().out


def test_exercise_1_ties_the_overlapping_schedules_when_passes_cost_the_same(capsys):
    totals = {line.split()[0]: float(line.split()[1]) for line in run("07_exercise_1.py", capsys).splitlines()}
    assert totals["GPipe"] == totals["1F1B"] == totals["Grouped"] == totals["Interleaved"] < totals["Sequential"]


def test_exercise_2_counts_the_samples_of_one_poptorch_call(capsys):
    out = run("07_exercise_2.py", capsys)
    assert "one call consumes 5,120 samples" in out and "effective batch 512: 10 weight updates per call" in out
