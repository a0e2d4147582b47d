"""POPLAR_LOG_LEVEL / POPLAR_LOG_DEST (issue 21): Poplar's log lines, levels, modules and destinations, and the
errors for values Poplar refuses."""

import datetime
import doctest
import os
import re

import pytest
from ipu_test_helpers import configure, data, ipu_model

from ipu_teach import ipu
from ipu_teach.ipu import poplar_log

LINE = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z PO:(?P<module>[A-Z]+) +(?P<pid>\d+)\.\d+ (?P<level>[TDIWE]): "
)


@pytest.fixture(autouse=True)
def no_log_variables(monkeypatch):
    for name in list(os.environ):
        if name.startswith("POPLAR_") and name.endswith(("LOG_LEVEL", "LOG_DEST")):
            monkeypatch.delenv(name)


def log_lines(text):
    """``(module, level letter, message)`` of every Poplar log line in ``text``; each line's pid is this one's."""
    found = []
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            assert int(match["pid"]) == os.getpid()
            found.append((match["module"], match["level"], line[match.end() :]))
    return found


def train(steps_per_execution=2, tiles=None):
    if tiles is None:
        configure(1)
    else:
        configure(1, tiles_per_ipu=tiles)
    model = ipu_model(steps_per_execution=steps_per_execution)
    x, y = data(16)
    model.fit(x, y, batch_size=4, verbose=0)
    return model.get_ipu_executable("train")


def test_a_line_has_poplars_format_to_the_character():
    # A real Poplar line (an SDK 3.3 PopTorch run, POPLAR_LOG_LEVEL=WARN), rebuilt from its parts.
    when = datetime.datetime(2024, 4, 8, 9, 27, 7, 604347, tzinfo=datetime.timezone.utc)
    line = poplar_log.format_line(
        "ENGINE", "WARN", "Estimated counters: 188416, actual counters: 59971", when, 791072, 791072
    )
    assert line == (
        "2024-04-08T09:27:07.604347Z PO:ENGINE   791072.791072 W: Estimated counters: 188416, actual counters: 59971"
    )
    assert poplar_log.format_line("CODELETS", "TRACE", "x", when, 1, 2).startswith(
        "2024-04-08T09:27:07.604347Z PO:CODELETS 1.2 T: "
    )


def test_off_by_default_nothing_is_logged(capsys):
    train()
    captured = capsys.readouterr()
    assert log_lines(captured.out + captured.err) == []


def test_info_goes_to_stderr_with_the_attach_and_the_compile_and_its_simulated_time(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    executable = train()
    captured = capsys.readouterr()
    assert log_lines(captured.out) == []
    assert log_lines(captured.err) == [
        ("TARGET", "I", "Attached to device 0 of the simulated IPU-POD16: 1 x GC200 (Mk2) IPU, 1,472 tiles each"),
        (
            "ENGINE",
            "I",
            f"Compiled `model` (train, micro-batch 4, 2 step(s) per execution): {executable.graph.compute_sets} "
            f"compute sets on 1 IPU(s), {executable.compile_seconds:,.1f} s simulated",
        ),
    ]


def test_debug_adds_each_compute_set_the_memory_the_time_split_and_each_execution(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    executable = train(steps_per_execution=2)
    lines = log_lines(capsys.readouterr().out)
    compute_sets = [m for module, level, m in lines if module == "GRAPH" and m.startswith("Compute set ")]
    assert [m.split(" (")[0].removeprefix("Compute set ") for m in compute_sets] == [
        s.name for s in executable.graph.steps
    ]
    runs = [m for module, level, m in lines if m.startswith("Engine::run")]
    assert len(runs) == 2  # 16 samples in batches of 4, 2 steps per execution
    assert runs[0].endswith("with the compile time of its first run") and runs[1].endswith(
        f"one execution of 2 step(s), {executable.seconds_per_execution * 1e6:,.1f} us simulated"
    )
    (split,) = [
        m for module, level, m in lines if module == "ENGINE" and level == "D" and m.startswith("One execution")
    ]
    assert f"{executable.timeline.total_cycles():,} cycles (compute " in split
    assert any(m.startswith("Memory: ") for _, _, m in lines)
    assert not any(level == "T" for _, level, _ in lines)


def test_trace_adds_a_line_per_tile(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "TRACE")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    train(tiles=16)
    tiles = [m for module, level, m in log_lines(capsys.readouterr().out) if level == "T"]
    assert [m.split(":")[0] for m in tiles] == [f"Tile {t}" for t in range(16)]


def test_a_module_level_overrides_the_global_one(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    monkeypatch.setenv("POPLAR_ENGINE_LOG_LEVEL", "DEBUG")
    train()
    assert {(module, level) for module, level, _ in log_lines(capsys.readouterr().out)} == {
        ("ENGINE", "I"),
        ("ENGINE", "D"),
    }
    monkeypatch.delenv("POPLAR_ENGINE_LOG_LEVEL")
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("POPLAR_GRAPH_LOG_LEVEL", "OFF")
    train()
    assert "GRAPH" not in {module for module, _, _ in log_lines(capsys.readouterr().out)}


def test_a_file_destination_is_appended_to_and_its_folder_made(tmp_path, monkeypatch, capsys):
    log_file = tmp_path / "logs" / "poplar.log"
    log_file.parent.mkdir()
    log_file.write_text("kept\n")
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    monkeypatch.setenv("POPLAR_LOG_DEST", str(log_file))
    train()
    captured = capsys.readouterr()
    assert log_lines(captured.out + captured.err) == []
    text = log_file.read_text()
    assert text.startswith("kept\n") and [m for m, _, _ in log_lines(text)] == ["TARGET", "ENGINE"]
    new_folder = tmp_path / "new" / "poplar.log"
    monkeypatch.setenv("POPLAR_LOG_DEST", str(new_folder))
    configure(1)
    assert len(log_lines(new_folder.read_text())) == 1


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "POPLAR_LOG_LEVEL",
            "info",
            "Unknown POPLAR_LOG_LEVEL 'info'. Valid values are TRACE, DEBUG, INFO, WARN, ERR and OFF "
            "(upper case: 'INFO').",
        ),
        (
            "POPLAR_LOG_LEVEL",
            "WARNING",
            "Unknown POPLAR_LOG_LEVEL 'WARNING'. Valid values are TRACE, DEBUG, INFO, WARN",
        ),
        ("POPLAR_LOG_LEVEL", "ERROR", "(did you mean 'ERR'?)"),
        ("POPLAR_TARGET_LOG_LEVEL", "3", "Unknown POPLAR_TARGET_LOG_LEVEL '3'. Valid values are TRACE, DEBUG"),
    ],
)
def test_a_level_poplar_does_not_know_is_an_error_naming_the_variable_and_the_levels(
    monkeypatch, variable, value, message
):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError) as caught:
        configure(1)
    assert message in str(caught.value)


def test_an_empty_level_is_off_as_in_poplar(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "")
    train()
    captured = capsys.readouterr()
    assert log_lines(captured.out + captured.err) == []


@pytest.mark.parametrize("dest", ["", "folder"])
def test_a_destination_that_is_not_a_file_name_is_an_error(tmp_path, monkeypatch, dest):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    monkeypatch.setenv("POPLAR_LOG_DEST", str(tmp_path) if dest else "")
    with pytest.raises(ValueError, match="POPLAR_LOG_DEST=.* is not a file name: set it to stdout, stderr"):
        configure(1)


def test_out_of_memory_is_an_err_line_or_with_allow_out_of_memory_a_warn_line(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "WARN")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    configure(1, tiles_per_ipu=4)
    model = ipu_model(hidden=512)
    x, y = data(1024)
    with pytest.raises(ipu.ModelOutOfMemoryError) as caught:
        model.fit(x, y, batch_size=1024, verbose=0)
    assert log_lines(capsys.readouterr().out) == [("ENGINE", "E", str(caught.value).splitlines()[0])]
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = 4
    config.profiling.allow_out_of_memory = True
    config.configure_ipu_system()
    model = ipu_model(hidden=512)
    with pytest.raises(ipu.ModelOutOfMemoryError):
        model.fit(x, y, batch_size=1024, verbose=0)
    ((module, level, message),) = log_lines(capsys.readouterr().out)
    assert (module, level) == ("ENGINE", "W")
    assert message.endswith("(debug.allowOutOfMemory is set: the program compiled but cannot run)")


def test_pre_compile_says_it_does_not_attach(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 4
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()
    assert log_lines(capsys.readouterr().err) == [
        (
            "TARGET",
            "I",
            "Compiling for device 24 of the simulated IPU-POD16: 4 x GC200 (Mk2) IPUs, 1,472 tiles each; "
            "not attaching (device_connection.type is PRE_COMPILE)",
        )
    ]


def test_module_example_runs():
    globs = {"ipu": ipu, "os": os, **vars(poplar_log)}
    result = doctest.testmod(poplar_log, globs=globs, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
