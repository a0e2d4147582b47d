"""The solutions of notebook 08's exercises run in the notebook's namespace and print what the exercises ask for.

The solutions use the notebook's data, network and ``compiled`` helper, as a learner's ``%load`` does: the test
runs the notebook's defining cells (imports, data, model, helper; not its training) and then each solution."""

import re

import pytest
from notebook_solutions import defining_namespace
from notebook_solutions import run_solution as run

from ipu_teach import hardware, ipu, poptorch

DEFINING_CELLS = ("%matplotlib inline", "transform_mnist =", "class Block(", "def compiled(")


@pytest.fixture(scope="module")
def namespace():
    names = defining_namespace("08_poptorch_on_the_ipu.ipynb", DEFINING_CELLS)
    names["host_call"] = hardware.HOST.execution_seconds("poptorch")
    return names


def test_exercise_1_counts_the_combined_batch(namespace, capsys):
    out = run("08_exercise_1.py", namespace, capsys)
    assert "one call takes 1,280 images: 4 x 20 iterations x 2 replicas x 8 accumulated" in out
    assert "1 call(s) per pass over 2,400 images (1,120 left over, dropped)" in out
    assert "20 weight updates per call, each from 64 images" in out


def test_exercise_2_finds_the_smallest_accumulation_and_the_bubble_shrinking(namespace, capsys):
    out = run("08_exercise_2.py", namespace, capsys)
    assert "greater than or equal to the number of pipeline stages (7)" in out
    rates = {
        int(k): float(v.replace(",", ""))
        for k, v in re.findall(r"gradientAccumulation\(\s*(\d+)\):.* ([\d,]+) images/s", out)
    }
    assert list(rates) == [7, 16, 64]
    assert rates[7] < rates[16] < rates[64]
    opts = poptorch.Options().deviceIterations(2)
    opts.Training.gradientAccumulation(16)
    with ipu.system.restored_afterwards():
        seconds = namespace["compiled"](opts, {"layer2": 1, "layer3": 2, "layer4": 3}).get_ipu_executable()
    assert rates[16] == round(8 * 2 * 16 / seconds.seconds_per_execution)  # printed as the simulator timed it


def test_exercise_3_finds_the_smallest_device_iterations(namespace, capsys):
    out = run("08_exercise_3.py", namespace, capsys)
    needed = int(re.search(r"smallest: deviceIterations\((\d+)\)", out).group(1))
    printed = {int(n): float(s) for n, s in re.findall(r"deviceIterations\((\d+)\): the host's call is ([\d.]+)%", out)}
    assert list(printed) == [needed - 1, needed]
    shares = {}
    with ipu.system.restored_afterwards():
        for count in printed:
            executable = namespace["compiled"](poptorch.Options().deviceIterations(count)).get_ipu_executable()
            shares[count] = namespace["host_call"] / executable.seconds_per_execution
    assert shares[needed - 1] >= 0.05 > shares[needed]  # the smallest count under 5%
    assert printed == {count: round(100 * share, 3) for count, share in shares.items()}
