"""A report received from someone else is untrusted: opening it validates it, its names are never
markup in the widgets' HTML nor math in their figures, and writing one never leaves the report folder."""

import json

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
