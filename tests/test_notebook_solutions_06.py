"""The solutions of notebook 06's exercises run and print what the exercises ask for."""

import re
import runpy
from pathlib import Path

import pytest

from ipu_teach import ipu
from ipu_teach.keras import mixed_precision

SOLUTIONS = Path(__file__).resolve().parents[1] / "notebooks" / "solutions"


@pytest.fixture(autouse=True)
def no_system_left_behind():
    yield
    ipu.system.reset()
    mixed_precision.set_global_policy(None)


def run(name, capsys):
    return run_with_namespace(name, capsys)[1]


def run_with_namespace(name, capsys):
    namespace = runpy.run_path(str(SOLUTIONS / name), run_name="__main__")
    return namespace, capsys.readouterr().out


def test_exercise_1_shows_fp16_spacing_and_a_stalled_sum(capsys):
    out = run("06_exercise_1.py", capsys)
    assert "2048 + 1 in fp16: 2048.0" in out and "2048 + 2 in fp16: 2050.0" in out
    assert "0.01 added 10,000 times in fp16: 32.0" in out


def test_exercise_2_shows_the_thin_first_convolution_gaining_least(capsys):
    """Per convolution: fp16 with float partials (8 conv units, fp32 runs 16), then with half partials (16)."""
    namespace, out = run_with_namespace("06_exercise_2.py", capsys)
    speedups = [float(s) for s in re.findall(r"speed-up ([\d.]+)x", out)]
    assert len(speedups) == 4
    fp32, fp16, half = namespace["conv_fp32"], namespace["conv_fp16"], namespace["conv_half"]
    for layer in ("conv2d/Conv2D", "conv2d_1/Conv2D"):  # the printed cycles are the compiled programs' own
        assert f"fp32 {fp32[layer]:>6,} cycles   fp16 {fp16[layer]:>6,} cycles   " in out
        assert f"fp16, half partials {half[layer]:>6,} cycles   speed-up {fp32[layer] / half[layer]:.2f}x" in out
    assert ipu.system.current() is None and mixed_precision.global_policy().name == "float32"  # as it found them
    first_float, first_half, second_float, second_half = speedups
    assert 0.95 < first_float < 1.05  # 1 input channel: fp16's 4 short passes a position take fp32's 2 long ones' time
    # the products' AMP passes gain 2x (float partials) or 4x (half); the vector work around them 2x in fp16
    assert first_float < first_half < 2 and 1 < second_float < second_half < 4
    assert second_half > first_half and second_float > first_float


def test_exercise_3_halves_three_times_then_doubles_once(capsys):
    out = run("06_exercise_3.py", capsys)
    assert "loss scale: [32768, 16384, 8192, 4096, 4096, 4096, 4096, 8192, 8192]" in out
    assert "weight after the 5 good steps: 0.975" in out


def test_exercise_4_trades_temporary_memory_for_compute_sets_and_time(capsys):
    out = run("06_exercise_4.py", capsys)
    assert "0.6: out of memory" in out
    rows = re.findall(r"fits: +([\d,]+) B temporary.*?(\d+) compute sets, +([\d.]+) us", out)
    temporary, sets, micros = zip(*[(int(t.replace(",", "")), int(c), float(u)) for t, c, u in rows])
    assert len(rows) == 3
    assert list(temporary) == sorted(temporary, reverse=True) and list(sets) == sorted(sets)
    assert list(micros) == sorted(micros)
