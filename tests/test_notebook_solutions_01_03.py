"""The exercise solutions of notebooks 01 to 03 run on their own and their answers hold.

Each solution runs in a fresh namespace (as `%load` then run would, minus the notebook's names);
its results are checked against figures computed here independently (arithmetic, the cost model's
compile-time rule, the rules' error messages), so a solution cannot rot unnoticed.
"""

import math
import re
import runpy
from pathlib import Path

import pytest

from ipu_teach import hardware, ipu
from ipu_teach.ipu import compile_time

HOST = hardware.HOST

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOLUTIONS = NOTEBOOKS / "solutions"
COURSE = ("01_porting_keras_to_the_ipu.ipynb", "02_steps_per_execution.ipynb", "03_replication.ipynb")


def run(name, capsys):
    namespace = runpy.run_path(str(SOLUTIONS / name), run_name="solution")
    return namespace, capsys.readouterr().out


@pytest.mark.parametrize("notebook", COURSE)
def test_every_solution_the_notebook_names_exists(notebook):
    text = (NOTEBOOKS / notebook).read_text(encoding="utf-8")
    named = re.findall(r"%load (solutions/[\w.]+\.py)", text)
    prefix = notebook[:2]
    assert len(named) >= 2, f"{notebook} should point to its exercise solutions with %load"
    for path in named:
        assert path.startswith(f"solutions/{prefix}_"), path
        assert (NOTEBOOKS / path).is_file(), f"{notebook} loads {path}, which does not exist"


def test_01_exercise_1_dropped_samples(capsys):
    _, output = run("01_exercise_1.py", capsys)
    rows = {
        (line[:16].strip(), int(line.split()[-3])): tuple(map(int, line.split()[-2:]))
        for line in output.splitlines()[1:]
    }
    sizes = {"full MNIST": (60_000, 10_000), "bundled subset": (10_000, 2_560)}
    assert len(rows) == 8
    for (data_set, batch), dropped in rows.items():
        train, test = sizes[data_set]
        assert dropped == (train % batch, test % batch)
    assert rows[("full MNIST", 64)] == (32, 16)  # the tutorial's 32 training images; 16 (not 48) test images


def test_01_exercise_2_only_an_identical_program_loads_from_the_cache(capsys):
    namespace, output = run("01_exercise_2.py", capsys)
    assert list(namespace["loaded"].values()) == [False, True, False, True, False]
    assert output.count("loaded from the cache") == 2  # the identical model, and the new learning rate
    assert not Path(namespace["cache"]).exists()  # the solution cleans up its cache folder


def test_01_exercise_3_a_hidden_layer_adds_its_own_compute_sets(capsys):
    namespace, output = run("01_exercise_3.py", capsys)
    plain, hidden = namespace["compiled"][None], namespace["compiled"][128]
    hidden_layer = namespace["model"].layers[-2].name  # the Dense(128) before the output layer
    own = [step for step in hidden.graph.steps if step.scope == hidden_layer]
    assert hidden.graph.compute_sets - plain.graph.compute_sets == len(own)
    # its product, rearrangement and partials' reduction, bias add, ReLU; their gradients (the bias gradient a
    # reduction in two stages); the two weights' updates
    assert len(own) == 16
    assert {step.phase for step in own} == {"forward", "backward", "update"}
    for executable in (plain, hidden):
        assert executable.compile_seconds == pytest.approx(compile_time.compile_seconds(executable.graph))
    added = hidden.compile_seconds - plain.compile_seconds
    # each added compute set costs its working tiles and every tile's control code (ipu/compile_time.py)
    per_compute_set = HOST.compile_s_per_program_tile_step * plain.graph.spec.tiles
    assert len(own) * per_compute_set < added
    assert f"adds {len(own)} compute sets and {added:.1f} s" in output


def test_02_exercise_1_the_formula_and_the_ten_percent_threshold(capsys):
    namespace, _ = run("02_exercise_1.py", capsys)
    overhead, device_step, smallest = namespace["overhead"], namespace["device_step"], namespace["smallest"]
    assert 0 < device_step < overhead
    share = lambda n: (overhead / n) / (overhead / n + device_step)  # noqa: E731
    assert share(smallest) < 0.1 <= share(smallest - 1)
    assert namespace["predicted"] == pytest.approx(overhead / 937 + device_step)


def test_02_exercise_2_evaluate_steps_per_execution_on_40_batches(capsys):
    namespace, _ = run("02_exercise_2.py", capsys)
    outcomes = namespace["outcomes"]
    assert outcomes[8] == outcomes[40] == "runs"
    assert outcomes[16].startswith("error: steps_per_execution=16 must divide")
    assert outcomes[64] == "runs, truncated to 40 with a warning"


def test_02_exercise_3_small_batches_suffer_most_from_the_overhead(capsys):
    namespace, _ = run("02_exercise_3.py", capsys)
    rates = namespace["rates"]
    one_step = [rates[b][0] for b in (16, 64, 256)]
    assert one_step == sorted(one_step)
    gains = {b: rates[b][1] / rates[b][0] for b in rates}
    assert min(gains.values()) > 5  # even batch 256 (~6x longer steps than batch 16 on the device) gains
    assert gains[16] > gains[64] > gains[256]


def test_03_exercise_1_bigger_batches_scale_better_but_not_perfectly(capsys):
    namespace, _ = run("03_exercise_1.py", capsys)
    speed_up, efficiency = namespace["speed_up"], namespace["efficiency"]
    assert 1 < speed_up[64] < speed_up[256] < 2
    assert efficiency[64] < efficiency[256] < 1


def test_03_exercise_2_errors_say_what_to_change(capsys):
    namespace, output = run("03_exercise_2.py", capsys)
    assert "powers of two; select 2 or 4 IPUs" in namespace["errors"][3]
    assert "use_system('IPU-POD64')" in namespace["errors"][32]
    assert "attached 32 IPUs" in output
    assert ipu.system.system_name() == "IPU-POD16"
    assert math.log2(ipu.system.current().num_ipus).is_integer()


def test_02_exercise_4_io_tiles_have_a_best_count_between_few_and_many(capsys):
    namespace, output = run("02_exercise_4.py", capsys)
    step_us, best = namespace["step_us"], namespace["best"]
    assert best not in (0, 8, 512)  # neither no I/O tiles, nor the fewest, nor the most
    assert step_us[best] < step_us[0]
    assert step_us[512] > step_us[best] and step_us[8] > step_us[best]
    assert f"fastest: {best} I/O tiles" in output
