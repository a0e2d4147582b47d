"""A report received from someone else is untrusted: opening it validates it, its names are never
markup in the widgets' HTML nor math in their figures, and writing one never leaves the report folder."""

import json
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import pytest
from profiling_helpers import configure, fit, small_cnn

from ipu_teach import profiling
from ipu_teach.validation import BadFileError
from ipu_teach.widgets import ExecutionTraceView, TileMemoryExplorer

HOSTILE = "<img src=x onerror=alert(1)>"


def saved(report, tmp_path, change):
    data = profiling.files.report_to_dict(report)
    change(data)
    path = tmp_path / "received" / "profile.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def hostile_names(data):
    for variable in data["compilation"]["variables"]:
        variable["name"] = HOSTILE
    data["compilation"]["programSteps"] = [
        [HOSTILE + " $\\foo$"] * len(steps) for steps in data["compilation"]["programSteps"]
    ]
    for step in data["execution"]["steps"]:
        step["name"] = HOSTILE + " $\\frac{$"
    data["execution"]["ipuName"] = "$\\bad$"


def test_a_hostile_report_is_escaped_in_every_widget_caption_and_drawn_as_text(trained, tmp_path):
    _, report = trained
    received = profiling.open_report(saved(report, tmp_path, hostile_names))
    for view in (TileMemoryExplorer(received), ExecutionTraceView(received)):
        assert "<img" not in view.caption.value
        view.figure.canvas.draw()  # a `$...$` name would raise here if it were parsed as mathtext
    tile_memory = TileMemoryExplorer(received)
    assert "&lt;img src=x onerror=alert(1)&gt;" in tile_memory.caption.value


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d.clear() or d.update(format="ipu-teach-profile", version=1),
            r"a part is missing or malformed \(KeyError",
        ),
        (
            lambda d: d["execution"].update(clockFrequency=0),
            r"execution.clockFrequency is 0, expected a positive number",
        ),
        (lambda d: d["compilation"]["target"].update(clockFrequency=0), "target.clockFrequency is 0"),
        (lambda d: d["compilation"]["target"].update(numIPUs=3), r"tileTotals has shape \(1, 16\), expected \(3, 16\)"),
        (lambda d: d["compilation"]["variables"][0].update(perTile=[1, 2]), "is not mapped to the tiles of one IPU"),
        (lambda d: d["execution"]["steps"][0].pop("ipus"), r"KeyError: 'ipus'"),
        (lambda d: d["compilation"]["variables"][0].update(perTile=1e308), r"malformed \(OverflowError"),
        (lambda d: d["compilation"]["target"].update(numIPUs=None), "target.numIPUs is None, expected a positive"),
        (lambda d: d["compilation"]["variables"][0].update(category=[]), "variable 0 needs a name and a category"),
    ],
)
def test_a_damaged_report_is_refused_naming_the_file(trained, tmp_path, change, message):
    _, report = trained
    path = saved(report, tmp_path, change)
    with pytest.raises(BadFileError, match=message) as refused:
        profiling.open_report(path)
    assert str(path) in str(refused.value) and "capture the report again" in str(refused.value)


@pytest.mark.parametrize(
    "content, message",
    [("null", "it holds null instead of a JSON object"), ('{"format": "ipu-teach-prof', "it is not JSON")],
)
def test_a_report_that_is_null_or_not_json_is_refused(tmp_path, content, message):
    path = tmp_path / "profile.json"
    path.write_text(content)
    with pytest.raises(BadFileError, match=message):
        profiling.open_report(path)


@pytest.mark.parametrize("name", ["../../outside", "a/b", ".hidden"])
def test_a_model_name_never_writes_a_report_outside_its_folder(tmp_path, name):
    def named():
        model = small_cnn()
        model.name = name
        return model

    configure(auto_report=True, directory=str(tmp_path / "reports"))
    fit(named)
    written = [p.resolve() for p in tmp_path.rglob("profile.json")]
    assert len(written) == 1 and (tmp_path / "reports").resolve() in written[0].parents
    assert written[0].parent.parent == (tmp_path / "reports").resolve()


@pytest.mark.parametrize(
    "kind, message",
    [
        ("deep JSON", "its JSON nests 100,001 levels deep, more than the 100 allowed"),
        ("FIFO", r"it is a FIFO \(named pipe\), not a regular file"),
        ("symlink to /dev/zero", "it is a device, not a regular file"),
        ("over the size limit", "it holds 134,217,729 bytes, more than the 134,217,728 allowed"),
    ],
)
def test_a_report_deep_a_fifo_a_device_or_too_big_is_refused_unread(tmp_path, fifo, kind, message):
    path = tmp_path / "profile.json"
    if kind == "deep JSON":
        path.write_text('{"format": "ipu-teach-profile", "version": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    elif kind == "FIFO":
        fifo(path)
    elif kind == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as sparse:  # no disk used
            sparse.truncate(profiling.files.MAX_REPORT_BYTES + 1)
    with pytest.raises(BadFileError, match=message) as refused:
        profiling.open_report(path)
    assert str(path) in str(refused.value) and "capture the report again" in str(refused.value)


def one_more_run_of_step_0(data):
    data["execution"]["steps"][0]["count"] += 1


def loop_of_2_to_the_62_runs_of_step_0(data):
    data["execution"]["schedule"].append([2**62, [0]])
    data["execution"]["steps"][0]["count"] += 2**62


LIMIT = "an integer from 0 to 9,223,372,036,854,775,807"


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["execution"]["steps"][0].update(count=-1), rf"execution.steps\[0\].count is -1, expected {LIMIT}"),
        (lambda d: d["execution"]["steps"][1].update(count=2.5), r"execution.steps\[1\].count is 2.5, expected"),
        (lambda d: d["execution"]["steps"][2].update(count=True), r"execution.steps\[2\].count is True, expected"),
        (
            lambda d: d["execution"]["steps"][0].update(count=2**64),
            r"execution.steps\[0\].count is 18446744073709551616",
        ),
        (
            lambda d: d["execution"]["steps"][0]["ipus"][0].update(syncCycles=-150),
            r"execution.steps\[0\].ipus\[0\].syncCycles is -150, expected",
        ),
        (
            lambda d: d["compilation"]["program"].update(count=-2),
            r"compilation.program.count is -2, expected an integer",
        ),
        (
            lambda d: d["execution"]["schedule"][0].__setitem__(0, -3),
            r"execution.schedule\[0\]\[0\] is -3, expected a non-negative integer \(a repeat count\)",
        ),
        (lambda d: d["execution"]["schedule"][0].__setitem__(0, "2"), r"execution.schedule\[0\]\[0\] is '2', expected"),
        (
            lambda d: d["execution"]["schedule"].append(len(d["execution"]["steps"])),
            r"execution.schedule\[1\] is (\d+), expected a step index \(0 to \d+\) or \[count, \[items\]\]",
        ),
        (
            one_more_run_of_step_0,
            r"execution.steps\[0\].count is 3 but execution.schedule runs it 2 times",
        ),
        (loop_of_2_to_the_62_runs_of_step_0, r"its steps run more than the 9,223,372,036,854,775,807 cycles"),
    ],
)
def test_a_report_with_impossible_repeat_counts_is_refused_naming_the_field(trained, tmp_path, change, message):
    _, report = trained
    path = saved(report, tmp_path, change)
    with pytest.raises(BadFileError, match=message) as refused:
        profiling.open_report(path)
    assert str(path) in str(refused.value) and "capture the report again" in str(refused.value)


HANG_SECONDS = 120  # generous: opening and drawing take a few seconds; before, they counted out 10**15 iterations


def test_a_report_repeating_an_empty_loop_10_to_the_15_times_opens_traces_and_draws_at_once(trained, tmp_path):
    _, report = trained
    path = saved(report, tmp_path, lambda d: d["execution"]["schedule"].insert(0, [10**15, []]))
    code = f"""
import matplotlib
matplotlib.use("Agg")
from ipu_teach import profiling
from ipu_teach.widgets import ExecutionTraceView
report = profiling.open_report({str(path)!r})
profiling.write_chrome_trace(report, {str(tmp_path / "trace.json")!r}, max_supersteps=10)
view = ExecutionTraceView(report, max_supersteps=10)
print(view.figure.axes[0].get_xlabel())
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert result.returncode == 0, result.stderr
    total = report.execution.timeline().supersteps  # the empty loop adds none
    assert result.stdout.splitlines() == [
        f"Chrome trace {tmp_path / 'trace.json'}: the first 10 of {total} supersteps (cap max_supersteps=10)",
        f"simulated cycles (first 10 of {total} supersteps)",
    ]
