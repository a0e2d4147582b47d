"""When to write reports and whether out-of-memory programs may compile, as on the real system.

Reports are turned on by ``POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}'``
(also ``autoReport.outputGraphProfile``, ``autoReport.outputExecutionProfile``, ``debug.allowOutOfMemory``),
by ``IPUConfig().profiling.auto_report = True``, or for a block of code with ``auto_report("./report")``.
The executor calls ``on_compile`` after each new compilation; it writes one folder per executable.
"""
from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass

from ..session import on_reset
from . import build, files

TRUE_WORDS = ("true", "1", "yes", "on")
_overrides: list = []
_written: list = []


@dataclass(frozen=True)
class EngineOptions:
    auto_report: bool = False
    directory: str = "./report"
    graph_profile: bool = False
    execution_profile: bool = False
    allow_out_of_memory: bool = False


def _flag(value) -> bool:
    return str(value).strip().lower() in TRUE_WORDS


def _environment_options() -> dict:
    text = os.environ.get("POPLAR_ENGINE_OPTIONS", "") or "{}"
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"POPLAR_ENGINE_OPTIONS is not valid JSON ({error}): write it as "
                         """'{"autoReport.all":"true","autoReport.directory":"./report"}'""") from None
    if not isinstance(options, dict):
        raise ValueError(f"POPLAR_ENGINE_OPTIONS must be a JSON object of option names to values, got {text!r}")
    return options


def engine_options(configuration) -> EngineOptions:
    """Options from POPLAR_ENGINE_OPTIONS merged with IPUConfig.profiling and any ``auto_report`` block."""
    env = _environment_options()
    profiling = dict(configuration.profiling)
    for override in _overrides:
        profiling.update(override)
    every = _flag(env.get("autoReport.all", False))
    from_python = bool(profiling.get("auto_report"))
    graph = every or from_python or _flag(env.get("autoReport.outputGraphProfile", False))
    execution = every or from_python or _flag(env.get("autoReport.outputExecutionProfile", False))
    directory = env.get("autoReport.directory") or profiling.get("directory") or "./report"
    allow = _flag(env.get("debug.allowOutOfMemory", False)) or bool(profiling.get("allow_out_of_memory"))
    return EngineOptions(graph or execution, str(directory), graph, execution, allow)


@contextlib.contextmanager
def auto_report(directory: str = "./report", allow_out_of_memory: bool = False):
    """Write a report for every executable compiled inside the block (the Python form of autoReport.all)."""
    override = {"auto_report": True, "directory": os.fspath(directory)}
    if allow_out_of_memory:  # never turns off what IPUConfig or POPLAR_ENGINE_OPTIONS turned on
        override["allow_out_of_memory"] = True
    _overrides.append(override)
    try:
        yield
    finally:
        if override in _overrides:  # reset_session() inside the block already removed it
            _overrides.remove(override)


@on_reset
def _forget_capture() -> None:
    """No ``auto_report`` block active and no report written, as in a new process."""
    _overrides.clear()
    _written.clear()


def on_compile(model, mode, executable, configuration, options) -> None:
    """Write the report of a newly compiled executable when reports are on."""
    if not options.auto_report:
        return
    report = build.build_report(model.name, mode, executable, configuration,
                                {"autoReport.directory": options.directory,
                                 "autoReport.outputGraphProfile": options.graph_profile,
                                 "autoReport.outputExecutionProfile": options.execution_profile,
                                 "debug.allowOutOfMemory": options.allow_out_of_memory})
    _written.append(files.write_report(report, options.directory))


def written_reports() -> list:
    """Paths of the reports written by this Python process, oldest first."""
    return list(_written)


def last_report_path() -> str:
    if not _written:
        raise LookupError("No report has been written yet: turn reports on (POPLAR_ENGINE_OPTIONS, "
                          "IPUConfig().profiling.auto_report = True, or `with profiling.auto_report():`) "
                          "and compile a model")
    return _written[-1]
