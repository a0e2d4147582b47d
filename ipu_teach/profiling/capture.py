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

from ..session import runtime
from ..validation import boolean, known_names
from . import build, files

# The Poplar engine options the simulator acts on, and the other ones Poplar documents (accepted and
# ignored here, so a script written for the real system runs); any other name is an error, as Poplar
# refuses an unrecognised option.
SIMULATED_OPTIONS = (
    "autoReport.all",
    "autoReport.directory",
    "autoReport.outputGraphProfile",
    "autoReport.outputExecutionProfile",
    "debug.allowOutOfMemory",
)
OTHER_POPLAR_OPTIONS = (
    "autoReport.outputLoweredVars",
    "autoReport.outputArchive",
    "autoReport.outputDebugInfo",
    "autoReport.outputSerializedGraph",
    "autoReport.streamAtEachRun",
    "autoReport.executionProfileProgramRunCount",
    "debug.instrument",
    "debug.instrumentCompute",
    "debug.instrumentControlFlow",
    "debug.instrumentExternalExchange",
    "debug.computeInstrumentationLevel",
    "debug.outputAllSymbols",
    "debug.retainDebugInformation",
    "debug.verify",
    "debug.runtimeVerify",
    "profiler.format",
    "profiler.replicaToProfile",
    "profiler.programs",
    "target.syncReplicasIndependently",
    "opt.enableMultiAccessCopies",
    "opt.maxCopyMergeSize",
    "exchange.enablePrefetch",
    "exchange.streamBufferOverlap",
)


@dataclass(frozen=True)
class EngineOptions:
    auto_report: bool = False
    directory: str = "./report"
    graph_profile: bool = False
    execution_profile: bool = False
    allow_out_of_memory: bool = False


def _environment_options() -> dict:
    """POPLAR_ENGINE_OPTIONS checked: a JSON object of known option names; switches "true"/"false"."""
    text = os.environ.get("POPLAR_ENGINE_OPTIONS", "") or "{}"
    try:
        options = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"POPLAR_ENGINE_OPTIONS is not valid JSON ({error}): write it as "
            """'{"autoReport.all":"true","autoReport.directory":"./report"}'"""
        ) from None
    if not isinstance(options, dict):
        raise ValueError(f"POPLAR_ENGINE_OPTIONS must be a JSON object of option names to values, got {text!r}")
    known_names("POPLAR_ENGINE_OPTIONS", options, SIMULATED_OPTIONS + OTHER_POPLAR_OPTIONS, ValueError)
    switches = {
        name: boolean(f"POPLAR_ENGINE_OPTIONS {name!r}", options.get(name, False), words=True)
        for name in SIMULATED_OPTIONS
        if name != "autoReport.directory"
    }
    directory = options.get("autoReport.directory")
    if directory is not None and (not isinstance(directory, str) or not directory.strip()):
        raise ValueError(f"POPLAR_ENGINE_OPTIONS 'autoReport.directory' must be a folder name, got {directory!r}")
    return {**switches, "autoReport.directory": directory}


def engine_options(configuration) -> EngineOptions:
    """Returns the report options in force for a configured system: what the Poplar engine would be given.

    POPLAR_ENGINE_OPTIONS (``autoReport.all``, ``autoReport.directory``, ``debug.allowOutOfMemory``...),
    as on a real IPU, merged with ``IPUConfig.profiling`` (ipu-teach's shortcut) and any open
    ``auto_report`` block.

    Args:
      configuration: The configured system, ``ipu.system.current()``.

    Returns:
      An ``EngineOptions``.

    Example:

    >>> from ipu_teach import profiling
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.configure_ipu_system()
    >>> profiling.engine_options(ipu.system.current()).auto_report
    False
    >>> with profiling.auto_report("report"):
    ...     profiling.engine_options(ipu.system.current()).auto_report
    True
    """
    env = _environment_options()
    profiling = dict(configuration.profiling)
    for override in runtime.report_overrides:
        profiling.update(override)
    every = env["autoReport.all"]
    from_python = bool(profiling.get("auto_report"))
    graph = every or from_python or env["autoReport.outputGraphProfile"]
    execution = every or from_python or env["autoReport.outputExecutionProfile"]
    directory = env["autoReport.directory"] or profiling.get("directory") or "./report"
    allow = env["debug.allowOutOfMemory"] or bool(profiling.get("allow_out_of_memory"))
    return EngineOptions(graph or execution, str(directory), graph, execution, allow)


@contextlib.contextmanager
def auto_report(directory: str = "./report", allow_out_of_memory: bool = False):
    """Returns a context manager: every executable compiled inside the block writes a profile report.

    The Python form of ``POPLAR_ENGINE_OPTIONS='{"autoReport.all": "true", "autoReport.directory": ...}'``.
    Each report is a folder ``<directory>/<model>_<mode>_<key>/`` holding ``profile.json``, PopVision-like:
    memory per tile by category, liveness, and the execution's cycles; ``open_report`` reads it.

    Args:
      directory: The folder reports are written in. Default: ``"./report"``.
      allow_out_of_memory: Boolean, write the report of a model that does not fit, then raise
        (``debug.allowOutOfMemory``). Default: False.

    Example:

    >>> from ipu_teach import profiling
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.ipu_model.tiles_per_ipu = 16
    >>> config.configure_ipu_system()
    >>> with profiling.auto_report("report"), ipu.ipu_strategy.IPUStrategy().scope():
    ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    ...     model.compile("sgd", "mse", steps_per_execution=2)
    ...     history = model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
    >>> report = profiling.open_report(profiling.last_report_path())
    >>> report.compilation.target.numTiles
    16
    """
    override = {"auto_report": True, "directory": os.fspath(directory)}
    if allow_out_of_memory:  # never turns off what IPUConfig or POPLAR_ENGINE_OPTIONS turned on
        override["allow_out_of_memory"] = True
    runtime.report_overrides.append(override)
    try:
        yield
    finally:
        if override in runtime.report_overrides:  # reset_session() inside the block already removed it
            runtime.report_overrides.remove(override)


def on_compile(model, mode, executable, configuration, options) -> None:
    """Write the report of a newly compiled executable when reports are on."""
    if not options.auto_report:
        return
    report = build.build_report(
        model.name,
        mode,
        executable,
        configuration,
        {
            "autoReport.directory": options.directory,
            "autoReport.outputGraphProfile": options.graph_profile,
            "autoReport.outputExecutionProfile": options.execution_profile,
            "debug.allowOutOfMemory": options.allow_out_of_memory,
        },
    )
    runtime.reports_written.append(files.write_report(report, options.directory))


def written_reports() -> list:
    """Paths of the reports written by this Python process, oldest first."""
    return list(runtime.reports_written)


def last_report_path() -> str:
    """Returns the path of the last report written (its ``profile.json``), for ``open_report``.

    Raises:
      LookupError: if no report has been written yet (the message says how to turn reports on).

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # writes a report in ./report
    >>> profiling.last_report_path()
    'report/sequential_train_.../profile.json'
    """
    if not runtime.reports_written:
        raise LookupError(
            "No report has been written yet: turn reports on (POPLAR_ENGINE_OPTIONS, "
            "IPUConfig().profiling.auto_report = True, or `with profiling.auto_report():`) "
            "and compile a model"
        )
    return runtime.reports_written[-1]
