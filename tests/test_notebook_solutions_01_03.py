"""The exercise solutions of notebooks 01 to 03 run on their own and their answers hold.

Each solution runs in a fresh namespace (as `%load` then run would, minus the notebook's names);
its results are checked against figures computed here independently (arithmetic, the cost model's
compile-time rule, the rules' error messages), so a solution cannot rot unnoticed.
"""

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
    # what it prints: each variant, and whether its program loaded from the cache or compiled
    printed = dict(re.findall(r"^(.+?) +(loaded from the cache|compiled)$", output, re.MULTILINE))
    assert printed == {
        variant: "loaded from the cache" if loaded else "compiled" for variant, loaded in namespace["loaded"].items()
    }
    assert not Path(namespace["cache_folder"]).exists()  # the solution cleans up its cache folder
    assert ipu.executable_cache.cache_path() is None  # and turns the cache off again, as it found it
    assert ipu.system.current() is None  # nothing was configured before it: nothing is after it


def test_01_exercise_3_a_hidden_layer_adds_its_own_compute_sets(capsys):
    namespace, output = run("01_exercise_3.py", capsys)
    plain, hidden = namespace["compiled"][None], namespace["compiled"][128]
    hidden_layer = namespace["models"][128].layers[-2].name  # the Dense(128) before the output layer
    own = [step for step in hidden.graph.steps if step.scope == hidden_layer]
    # the output layer's product now adds up 128 inputs, not 1,600: its partial sums need fewer reduction stages
    plain_output, hidden_output = (namespace["models"][size].layers[-1].name for size in (None, 128))
    fewer = sum(s.scope == plain_output and "/reduce" in s.name for s in plain.graph.steps) - sum(
        s.scope == hidden_output and "/reduce" in s.name for s in hidden.graph.steps
    )
    assert fewer > 0
    assert hidden.graph.compute_sets - plain.graph.compute_sets == len(own) - fewer
    # its product, rearrangement and partials' reduction (two stages), bias add, ReLU; their gradients (each
    # product's transposed operand regrouped and copied into the plan's layout first, the bias gradient a reduction in
    # two stages); the two weights' updates
    assert len(own) == 21
    assert {step.phase for step in own} == {"forward", "backward", "update"}
    for executable in (plain, hidden):
        assert executable.compile_seconds == pytest.approx(compile_time.compile_seconds(executable.graph))
    added = hidden.compile_seconds - plain.compile_seconds
    # each added compute set costs its working tiles and every tile's control code (ipu/compile_time.py)
    per_compute_set = HOST.compile_s_per_program_tile_step * plain.graph.spec.tiles
    assert len(own) * per_compute_set < added
    assert f"adds {len(own) - fewer} compute sets and {added:.1f} s" in output
    for size, executable in ((None, plain), (128, hidden)):
        assert f"hidden layer {size!s:>4}: {executable.graph.compute_sets} compute sets, " in output


def test_02_exercise_1_the_formula_and_the_ten_percent_threshold(capsys):
    namespace, output = run("02_exercise_1.py", capsys)
    overhead, device_step = namespace["host_overhead"], namespace["device_seconds_per_step"]
    smallest = namespace["smallest"]
    assert overhead == HOST.execution_overhead_s
    assert 0 < device_step < overhead
    executable = namespace["measured_model"].get_ipu_executable("train")
    assert device_step == pytest.approx((executable.seconds_per_execution - overhead) / 32)
    share = lambda n: (overhead / n) / (overhead / n + device_step)  # noqa: E731
    assert share(smallest) < 0.1 <= share(smallest - 1)
    predicted = overhead / 937 + device_step
    assert namespace["predicted"] == pytest.approx(predicted)
    # what it prints: the device step, the prediction for N = 937 with its overhead share, the threshold
    assert f"device time per step: {device_step * 1e6:.1f} us (simulated)" in output
    assert f"(N = 937): {predicted * 1e6:.1f} us/step, host overhead {share(937):.0%}" in output
    assert f"host overhead below 10% from N = {smallest} steps per execution" in output


def test_02_exercise_2_evaluate_steps_per_execution_on_40_batches(capsys):
    namespace, output = run("02_exercise_2.py", capsys)
    outcomes = namespace["outcomes"]
    assert outcomes[8] == outcomes[40] == "runs"
    assert outcomes[16].startswith("error: steps_per_execution=16 must divide")
    assert outcomes[64] == "runs, truncated to 40 with a warning"
    printed = dict(re.findall(r"^steps_per_execution= ?(\d+): (.*)$", output, re.MULTILINE))
    assert printed == {str(n): outcome for n, outcome in outcomes.items()}
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back


def test_02_exercise_3_small_batches_suffer_most_from_the_overhead(capsys):
    namespace, output = run("02_exercise_3.py", capsys)
    rates = namespace["rates"]
    one_step = [rates[b][0] for b in (16, 64, 256)]
    assert one_step == sorted(one_step)
    gains = {b: rates[b][1] / rates[b][0] for b in rates}
    assert min(gains.values()) > 5  # even batch 256 (~6x longer steps than batch 16 on the device) gains
    assert gains[16] > gains[64] > gains[256]
    # at N = 1 every step pays the whole host overhead: no batch size gets past batch / overhead
    assert all(rates[b][0] < b / HOST.execution_overhead_s for b in rates)
    printed = {
        int(b): (float(one.replace(",", "")), float(epoch.replace(",", "")))
        for b, one, epoch in re.findall(r"^ +(\d+) +([\d,]+) +([\d,]+)$", output, re.MULTILINE)
    }
    assert printed == {b: (round(one), round(epoch)) for b, (one, epoch) in rates.items()}


def test_03_exercise_1_bigger_batches_scale_better_but_not_perfectly(capsys):
    namespace, output = run("03_exercise_1.py", capsys)
    speed_up, efficiency = namespace["speed_up"], namespace["efficiency"]
    assert 1 < speed_up[64] < 2 and 1 < speed_up[256] < 2
    assert speed_up[64] < speed_up[256]  # 2 replicas: the bigger batch hides the all-reduce, not the shared link
    assert efficiency[64] < efficiency[256] < 1  # 8 replicas: the fixed all-reduce is hidden better
    for batch in (64, 256):
        assert (
            f"batch {batch:>3} per replica: 2 replicas {speed_up[batch]:.2f}x, "
            f"8 replicas at {efficiency[batch]:.0%} efficiency (simulated)"
        ) in output
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back


def test_03_exercise_2_errors_say_what_to_change(capsys):
    namespace, output = run("03_exercise_2.py", capsys)
    assert "powers of two; select 2 or 4 IPUs" in namespace["errors"][3]
    assert "use_system('IPU-POD64')" in namespace["errors"][32]
    assert "auto_select_ipus=4 on the IPU-POD16: attached 4 IPUs" in output
    assert "auto_select_ipus=32 on the IPU-POD64: attached 32 IPUs" in output
    for num_ipus, error in namespace["errors"].items():
        assert f"auto_select_ipus={num_ipus}: {error}" in output
    assert ipu.system.system_name() == "IPU-POD16"
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back


def test_02_exercise_4_io_tiles_have_a_best_count_between_few_and_many(capsys):
    namespace, output = run("02_exercise_4.py", capsys)
    step_us, best = namespace["step_us"], namespace["best"]
    assert best not in (0, 8, 512)  # neither no I/O tiles, nor the fewest, nor the most
    assert step_us[best] < step_us[0]
    assert step_us[512] > step_us[best] and step_us[8] > step_us[best]
    printed = {int(n): float(us) for n, us in re.findall(r"^ +(\d+) +([\d.]+)$", output, re.MULTILINE)}
    assert printed == {n: round(us, 1) for n, us in step_us.items()}
    assert f"fastest: {best} I/O tiles, {step_us[0] / step_us[best]:.2f}x the step without I/O tiles" in output
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back


def test_02_exercise_5_a_custom_evaluation_loop_is_evaluate_without_the_outfeed(capsys):
    from ipu_teach import bsp

    namespace, output = run("02_exercise_5.py", capsys)
    loop, keras_program, steps = namespace["loop_program"], namespace["keras_program"], namespace["test_steps"]
    loss, accuracy = float(namespace["test_loss"].result()), float(namespace["test_accuracy"].result())
    assert steps == 40 and loop.steps_per_execution == keras_program.steps_per_execution == 40
    assert accuracy == namespace["keras_accuracy"] and loss == pytest.approx(namespace["keras_loss"], rel=1e-6)
    assert (loop.graph.mode, loop.graph.output_bytes, loop.graph.result_bytes) == ("test", 0, 0)
    rows = lambda executable: [line.split()[0] for line in executable.timeline.summary().splitlines()]  # noqa: E731
    assert "outfeed" in rows(keras_program) and "outfeed" not in rows(loop)
    # the same step; evaluate's also streams its loss and accuracy to the host, each of its 40 steps
    outfeed = bsp.CostEngine(bsp.DeviceToHost(keras_program.graph.output_bytes), keras_program.graph.spec).run()
    assert loop.timeline.seconds() + steps * outfeed.seconds() == pytest.approx(
        keras_program.timeline.seconds(), rel=1e-12
    )
    # what it prints: the two results, the two steps and the difference
    assert f"custom loop: loss {loss:.4f}, accuracy {accuracy:.4f}" in output
    assert f"evaluate:    loss {namespace['keras_loss']:.4f}, accuracy {namespace['keras_accuracy']:.4f}" in output
    loop_us, keras_us = namespace["loop_step_us"], namespace["keras_step_us"]
    assert f"device time per step: custom loop {loop_us:.1f} us, evaluate {keras_us:.1f} us (simulated)" in output
    assert f"the loop saves {outfeed.seconds() * 1e6:.1f} us per step: evaluate's outfeed of 8 bytes" in output
    assert ipu.system.current() is None  # the notebook's IPUs (here none) are back
