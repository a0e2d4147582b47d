"""Reports on disk: one folder per executable, atomic versioned JSON, reopened unchanged."""

import json

import numpy as np
import pytest

from ipu_teach import ipu, profiling
from ipu_teach.profiling import files


def test_json_round_trip_keeps_every_figure(trained):
    model, report = trained
    configuration = ipu.system.current()
    rebuilt = profiling.build_report(
        model.name, "train", model.get_ipu_executable("train"), configuration, report.options
    )
    assert files.report_to_dict(report) == files.report_to_dict(rebuilt)
    reopened = profiling.open_report(report.path)
    assert files.report_to_dict(reopened) == files.report_to_dict(report)
    assert reopened.compilation.live_peak(0) == report.compilation.live_peak(0)


def test_one_folder_per_executable_and_no_temporary_files(trained, tmp_path):
    model, report = trained
    folder = tmp_path / "report" / f"{model.name}_train_{model.get_ipu_executable('train').key[:8]}"
    assert report.path == str(folder / "profile.json")
    assert sorted(p.name for p in folder.iterdir()) == ["profile.json"]
    data = json.loads((folder / "profile.json").read_text())
    assert (data["format"], data["version"], data["simulated"]) == (files.FORMAT, files.VERSION, True)
    assert profiling.open_report(folder).path == report.path


def test_a_report_of_another_version_is_refused_with_what_to_do(trained, tmp_path):
    _, report = trained
    data = files.report_to_dict(report)
    data["version"] = files.VERSION + 1
    path = tmp_path / "future.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"format version 3; this ipu-teach reads versions 1, 2: capture the report"):
        profiling.open_report(path)


def test_a_version_1_report_still_opens_with_its_memory_derived_again(trained, tmp_path):
    _, report = trained
    data = files.report_to_dict(report)
    assert data["version"] == 2  # tileTotals: the bytes each tile needs, not-always-live tensors sharing memory
    data["version"] = 1
    variables = data["compilation"]["variables"]
    data["compilation"]["tileTotals"] = [np.sum([v["perTile"] for v in variables], axis=0).tolist()]  # v1's sums
    path = tmp_path / "version1.json"
    path.write_text(json.dumps(data))
    old = profiling.open_report(path)
    np.testing.assert_array_equal(old.compilation.tile_memory(0), report.compilation.tile_memory(0))
    assert list(old.compilation.memory_by_popvision_category) == list(report.compilation.memory_by_popvision_category)
    assert old.compilation.live_peak(0) == report.compilation.live_peak(0)


def test_opening_a_missing_report_says_how_reports_are_made(tmp_path):
    with pytest.raises(FileNotFoundError, match="auto_report"):
        profiling.open_report(tmp_path / "nothing")
