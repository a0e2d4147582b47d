"""Turning reports on as Graphcore does (POPLAR_ENGINE_OPTIONS) and from Python."""

import json

import pytest
from profiling_helpers import configure, fit

from ipu_teach import ipu, profiling


def _reports(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("profile.json"))


@pytest.mark.parametrize(
    "options",
    [
        {"autoReport.all": "true"},
        {"autoReport.outputGraphProfile": "true"},
        {"autoReport.outputExecutionProfile": "true"},
    ],
)
def test_poplar_engine_options_turn_reports_on(options, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps(options))
    configure()
    model = fit()
    assert _reports(tmp_path) == [f"report/{model.name}_train_{model.get_ipu_executable('train').key[:8]}/profile.json"]


def test_the_report_directory_option_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "POPLAR_ENGINE_OPTIONS", json.dumps({"autoReport.all": "true", "autoReport.directory": str(tmp_path / "here")})
    )
    configure()
    fit()
    assert len(_reports(tmp_path / "here")) == 1


def test_ipuconfig_profiling_turns_reports_on(tmp_path):
    configure(auto_report=True, directory=str(tmp_path / "cfg"))
    fit()
    assert len(_reports(tmp_path / "cfg")) == 1


def test_reports_are_off_by_default_and_after_an_auto_report_block(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    configure()
    with profiling.auto_report(tmp_path / "block"):
        fit()
    fit(batch_size=4)  # a new executable, compiled after the block
    assert len(_reports(tmp_path / "block")) == 1
    assert not (tmp_path / "report").exists()


def test_bad_poplar_engine_options_say_how_to_write_them(monkeypatch):
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", "{autoReport.all: true}")
    configure()
    with pytest.raises(ValueError, match="POPLAR_ENGINE_OPTIONS is not valid JSON"):
        fit()


def test_auto_report_can_allow_out_of_memory_but_never_turns_it_off(tmp_path, monkeypatch):
    configure(allow_out_of_memory=True)
    configuration = ipu.system.current()
    with profiling.auto_report(tmp_path):
        assert profiling.engine_options(configuration).allow_out_of_memory
    configure()
    configuration = ipu.system.current()
    with profiling.auto_report(tmp_path, allow_out_of_memory=True):
        assert profiling.engine_options(configuration).allow_out_of_memory
    assert not profiling.engine_options(configuration).allow_out_of_memory
