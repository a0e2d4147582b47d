"""Simulated time: deterministic, labelled, compile time in the first epoch only, and the executable
cache that saves it, keyed by what really forces a recompile."""

import json
import os
import shutil

import pytest
from helpers.models import compile_model
from ipu_test_helpers import build, configure, data, ipu_model, lines_with, progress_lines

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu
from ipu_teach.ipu import compile_time, executor

LOADED = "from the executable cache"


def train(capsys, batch_size=16, steps_per_execution=4, accumulation=None, replicas=1, hidden=8, epochs=2, n=256):
    """Fit a fresh model; return its printed output and its executable."""
    x, y = data(n)
    configure(replicas)
    model = ipu_model(steps_per_execution=steps_per_execution, accumulation=accumulation, hidden=hidden)
    capsys.readouterr()
    model.fit(x, y, batch_size=batch_size, epochs=epochs, shuffle=False, verbose=1)
    return capsys.readouterr().out, model.get_ipu_executable("train")


def test_simulated_times_are_deterministic(capsys):
    first_out, first = train(capsys)
    second_out, second = train(capsys)
    assert first.timeline.total_cycles() == second.timeline.total_cycles()
    assert first.seconds_per_execution == second.seconds_per_execution
    assert progress_lines(first_out) == progress_lines(second_out)


def test_progress_lines_are_labelled_simulated(capsys):
    out, _ = train(capsys)
    lines = progress_lines(out)
    assert len(lines) == 2
    assert all(simulated for *_, simulated in lines)


def test_the_first_epoch_includes_the_compile_time_and_later_epochs_do_not(capsys):
    out, executable = train(capsys, epochs=3)
    (steps, first_total, _, _), *later = progress_lines(out)
    executions = steps // 4
    compile_seconds = compile_time.compile_seconds(executable.graph)
    assert executable.compile_seconds == compile_seconds > hardware.HOST.compile_base_s
    assert first_total == round(compile_seconds + executions * executable.seconds_per_execution)
    for _steps_later, total, per_step, _ in later:
        assert total == 0
        assert per_step == pytest.approx(executable.seconds_per_execution / 4, abs=1e-6)


def test_a_bigger_graph_takes_longer_to_compile(capsys):
    _, dense = train(capsys)
    x, y = data(64)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(x.shape[1],))
        h = keras.layers.Dense(8, activation="relu")(inputs)
        h = keras.layers.Dense(8, activation="relu")(h)
        deeper = compile_model(keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(h)), 4)
    deeper.fit(x, y, batch_size=16, verbose=0)
    assert deeper.get_ipu_executable("train").compile_seconds > dense.compile_seconds


def cache_files(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".json"))


def test_a_second_identical_model_loads_from_the_cache_without_compiling(capsys, tmp_path):
    ipu.executable_cache.enable(tmp_path)
    out, compiled = train(capsys)
    assert not lines_with(out, LOADED)
    assert len(cache_files(tmp_path)) == 1
    out, loaded = train(capsys)
    [info] = lines_with(out, LOADED)
    assert info.startswith("INFO:") and str(tmp_path) in info
    assert loaded.from_cache and not compiled.from_cache
    first_epoch_seconds = progress_lines(out)[0][1]
    assert first_epoch_seconds < compiled.compile_seconds  # only loading the executable, not compiling it
    assert len(cache_files(tmp_path)) == 1


def test_layer_names_do_not_force_a_recompile(capsys, tmp_path):
    """In one session the second model's layers are named dense_2, dense_3: the same graph all the same."""
    ipu.executable_cache.enable(tmp_path)
    configure(1)
    x, y = data(64)
    executables = []
    for _ in range(2):
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = compile_model(build(new_session=False), 4)
        model.fit(x, y, batch_size=16, verbose=0)
        executables.append(model.get_ipu_executable("train"))
    assert [e.from_cache for e in executables] == [False, True]
    assert len(cache_files(tmp_path)) == 1


def test_without_a_cache_the_second_model_compiles_again(capsys):
    train(capsys)
    out, executable = train(capsys)
    assert not executable.from_cache and not lines_with(out, LOADED)


@pytest.mark.parametrize(
    "change", [{"batch_size": 32}, {"steps_per_execution": 8}, {"replicas": 2}, {"accumulation": 2}, {"hidden": 9}]
)
def test_what_forces_a_recompile_is_a_new_cache_entry(capsys, tmp_path, change):
    ipu.executable_cache.enable(tmp_path)
    train(capsys)
    out, executable = train(capsys, **change)
    assert not executable.from_cache and not lines_with(out, LOADED)
    assert len(cache_files(tmp_path)) == 2


def test_gradient_clipping_is_part_of_the_program_and_the_learning_rate_is_not():
    """Keras 2.6 bakes clipnorm / clipvalue into the graph: a clipped optimizer is another executable; the learning
    rate is a variable Graphcore's TensorFlow feeds to the program: no new executable."""
    structure = executor._optimizer_structure
    plain = structure(keras.optimizers.SGD(0.1))
    assert structure(keras.optimizers.SGD(0.2)) == plain and "clipping" not in plain  # keys made before still hold
    clipped = [structure(keras.optimizers.SGD(0.1, **c)) for c in ({"clipnorm": 1.0}, {"clipvalue": 0.5})]
    assert plain not in clipped and clipped[0] != clipped[1]


def test_cache_entries_are_json_and_writes_leave_no_temporary_files(capsys, tmp_path):
    ipu.executable_cache.enable(tmp_path)
    train(capsys)
    train(capsys, batch_size=32)
    assert sorted(os.listdir(tmp_path)) == cache_files(tmp_path)
    for name in cache_files(tmp_path):
        with open(tmp_path / name, encoding="utf-8") as f:
            entry = json.load(f)
        assert entry["key"] == name[: -len(".json")] and entry["mode"] == "train"
        assert entry["compile_seconds"] > 0


def test_deleting_the_cache_folder_is_safe(capsys, tmp_path):
    folder = tmp_path / "cache"
    ipu.executable_cache.enable(folder)
    train(capsys)
    shutil.rmtree(folder)
    out, executable = train(capsys)
    assert not executable.from_cache
    assert len(cache_files(folder)) == 1
    _, again = train(capsys)
    assert again.from_cache


def test_an_unreadable_cache_entry_is_compiled_again(capsys, tmp_path):
    ipu.executable_cache.enable(tmp_path)
    train(capsys)
    [name] = cache_files(tmp_path)
    (tmp_path / name).write_text("{not json", encoding="utf-8")
    _, executable = train(capsys)
    assert not executable.from_cache
    json.loads((tmp_path / name).read_text(encoding="utf-8"))


def test_tf_poplar_flags_turn_the_cache_on(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TF_POPLAR_FLAGS", f"--show_progress_bar=false --executable_cache_path={tmp_path}")
    train(capsys)
    assert len(cache_files(tmp_path)) == 1
    out, executable = train(capsys)
    assert executable.from_cache and lines_with(out, LOADED)
