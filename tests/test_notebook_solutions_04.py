"""The solutions of notebook 04's exercises run and print what the exercises ask for."""

import re
import runpy
from pathlib import Path

import pytest

from ipu_teach import ipu

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


def run(name, capsys):
    runpy.run_path(str(SOLUTIONS / name), run_name="__main__")
    return capsys.readouterr().out


def test_exercise_1_lists_the_counts_each_schedule_accepts(capsys):
    out = run("04_exercise_1.py", capsys)
    assert "Grouped      [6, 12, 18, 24, 30]" in out
    assert "Interleaved  [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]" in out
    assert "Sequential   [1, 2, 3" in out


def test_exercise_2_shows_interleaved_losing_as_the_passes_differ(capsys):
    lines = [line for line in run("04_exercise_2.py", capsys).splitlines() if "backward =" in line]
    totals = [
        (float(line.split("Grouped")[1].split(",")[0]), float(line.split("Interleaved")[1].split()[0]))
        for line in lines
    ]
    assert totals[0][0] == totals[0][1]
    assert all(interleaved > grouped for grouped, interleaved in totals[1:])


def test_exercise_3_reaches_the_predicted_effective_batch(capsys):
    out = run("04_exercise_3.py", capsys)
    assert "across 8 replicas and accumulating 16 batches per optimizer step, your effective batch size is 4096" in out
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back


def test_exercise_4_the_most_balanced_cut_is_the_fastest(capsys):
    namespace = runpy.run_path(str(SOLUTIONS / "04_exercise_4.py"), run_name="__main__")
    out = capsys.readouterr().out
    stage_us, step_us, best = namespace["stage_us"], namespace["step_us"], namespace["fastest_cut"]
    slowest_stage = {cut: max(costs) for cut, costs in stage_us.items()}
    assert best == min(slowest_stage, key=slowest_stage.get)  # the fastest step has the cheapest slowest stage
    assert best not in (1, 5)  # neither all on one side
    assert step_us[best] < min(step_us[1], step_us[5])
    assert f"fastest: {best} layers on stage 0" in out
    printed = {
        int(cut): (float(stage_0), float(stage_1), float(step))
        for cut, stage_0, stage_1, step in re.findall(r"^ +(\d) +([\d.]+) +([\d.]+) +([\d.]+)$", out, re.MULTILINE)
    }
    assert printed == {
        cut: (round(costs[0], 1), round(costs[1], 1), round(step_us[cut], 1)) for cut, costs in stage_us.items()
    }
    busy = [float(share) for share in re.findall(r"busy (\d+)%", out)]
    assert len(busy) == 2 and min(busy) > 50  # balanced: both stages mostly busy
    explorer = namespace["explorer"]
    assert [f + b for f, b in zip(explorer.costs.forward, explorer.costs.backward)] == pytest.approx(
        stage_us[best]
    )  # the explorer shows the measured stage costs
