"""The exercise solutions of notebook 00 run and their claims hold."""

import math
import re
import runpy
from pathlib import Path

import numpy as np

SOLUTIONS = Path(__file__).resolve().parents[2] / "notebooks" / "solutions"


def run(name, capsys):
    namespace = runpy.run_path(str(SOLUTIONS / name), run_name="solution")
    return namespace, capsys.readouterr().out


def test_exercise_1_predictions_match_the_simulation(capsys):
    namespace, output = run("00_exercise_1.py", capsys)
    for tiles in (4, 16, 64):
        totals = namespace["matrix_vector_totals"](256, 32, tiles)
        assert totals["compute"] == math.ceil(256 / tiles / 6) * 75 * 6  # rounds x instructions x 6-cycle turns
        assert totals["exchange"] == 32  # a broadcast: x's 128 bytes sent once, received once by each tile
    # what it prints: each prediction equals the simulation
    printed = re.findall(
        r"predicted compute ([\d,]+) and exchange (\d+) cycles; simulated compute ([\d,]+) and exchange (\d+)", output
    )
    assert len(printed) == 3
    assert all(
        p_compute == s_compute and p_exchange == s_exchange for p_compute, p_exchange, s_compute, s_exchange in printed
    )


def test_exercise_2_six_vertices_fill_the_threads(capsys):
    namespace, output = run("00_exercise_2.py", capsys)
    cycles = {k: namespace["cycles_with"](k) for k in (1, 6, 7, 12)}
    assert cycles == {1: 6 * 600, 6: 6 * 100, 7: 6 * 2 * (600 // 7), 12: 6 * 100}
    # what it prints: for each count k, ceil(k / 6) rounds of 600 / k instructions, each issued every 6th cycle
    printed = {int(k): int(c) for k, c in re.findall(r"(\d+) vertices on one tile: +(\d+) compute cycles", output)}
    assert sorted(printed) == [1, 2, 3, 4, 5, 6, 8, 12]
    assert printed == {k: 6 * math.ceil(k / 6) * (600 // k) for k in printed}


def test_exercise_3_axpy_equals_numpy(capsys):
    namespace, output = run("00_exercise_3.py", capsys)
    engine, y = namespace["axpy_engine"], namespace["y_tensor"]
    expected = np.float32(3.0) * namespace["x_start"] + namespace["y_start"]
    np.testing.assert_array_equal(engine.read_tensor(y), expected)
    assert "equal to numpy: True" in output
    timeline = namespace["axpy_timeline"]
    assert timeline.exchange[0, 0] == 1  # tile 0 broadcasts the 4-byte `a` once: 1 cycle
    assert timeline.summary() in output  # what it prints is the simulation's own summary
    assert re.search(r"^axpy +1 +\d+ +150 +1 +\d+$", output, re.MULTILINE)
