"""``POPLAR_LOG_LEVEL`` and ``POPLAR_LOG_DEST``: Poplar's log of attaching, compiling and running, simulated.

The workshop slides' "Useful env variables": ``POPLAR_LOG_LEVEL`` (OFF, the default; ERR, WARN, INFO, DEBUG,
TRACE) turns on Poplar's log, ``POPLAR_LOG_DEST`` sends it to ``stderr`` (the default), ``stdout`` or a file;
``POPLAR_<MODULE>_LOG_LEVEL`` sets one module's level (Poplar user guide, "Environment variables": modules
CODELETS, ENGINE, GRAPH, PROFILER, PROGRAM, TARGET, TENSOR). Lines have Poplar's format, from spdlog's pattern
``%Y-%m-%dT%H:%M:%S.%fZ PO:%-8n %P.%t %L: %v`` in UTC (graphcore/poplibs ``lib/poplibs_support/logging.cpp``,
whose PopLibs log Poplar's mirrors)::

    2024-04-08T09:27:07.604347Z PO:ENGINE   791072.791072 I: ...

What is logged is what ipu-teach simulates: the IPUs attached (PO:TARGET), each executable compiled or loaded
from the cache with its simulated compile time, and an out-of-memory graph (PO:ENGINE); at DEBUG, each compute
set, the memory and where one execution's time goes (PO:GRAPH, PO:ENGINE) and each execution run; at TRACE, each
tile's memory and compute. Times in the messages are simulated; the timestamps are the host's clock.

The variables are read each time something is logged (as ``TF_POPLAR_FLAGS`` is read at each compile), so
``%env POPLAR_LOG_LEVEL=INFO`` in a notebook takes effect at the next compile. As in Poplar, the level names
are upper case and an unknown one is an error naming the valid values. Unlike Poplar, which truncates a log
file when the process starts, lines are appended to it: nothing already in the file is lost.

Example:

>>> os.environ["POPLAR_LOG_LEVEL"] = "INFO"
>>> os.environ["POPLAR_LOG_DEST"] = "stdout"
>>> config = ipu.config.IPUConfig()
>>> config.auto_select_ipus = 2
>>> config.configure_ipu_system()         # doctest: +ELLIPSIS
20...Z PO:TARGET   ... I: Attached to device 16 of the simulated IPU-POD16: 2 x GC200 (Mk2) IPUs, 1,472 tiles each
>>> os.environ["POPLAR_LOG_LEVEL"] = "warning"
>>> log("ENGINE", "INFO", "hello")
Traceback (most recent call last):
...
ValueError: Unknown POPLAR_LOG_LEVEL 'warning'. Valid values are TRACE, DEBUG, INFO, WARN, ERR and OFF (did you mean ...
>>> del os.environ["POPLAR_LOG_LEVEL"], os.environ["POPLAR_LOG_DEST"]
"""

from __future__ import annotations

import datetime
import os
import sys
import threading

import numpy as np

from .. import hardware
from ..validation import closest

LEVEL_VARIABLE = "POPLAR_LOG_LEVEL"
DEST_VARIABLE = "POPLAR_LOG_DEST"
LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERR", "OFF")
"""Poplar's levels, most verbose first: a line is written when its level is at or after the one set."""
MODULES = ("CODELETS", "ENGINE", "GRAPH", "PROFILER", "PROGRAM", "TARGET", "TENSOR")
_NAME_WIDTH = max(len(module) for module in MODULES)


def _parse(variable: str, value: str) -> int:
    if value == "":  # as Poplar: set but empty is OFF
        return LEVELS.index("OFF")
    if value in LEVELS:
        return LEVELS.index(value)
    hint = f" (upper case: {value.upper()!r})" if value.upper() in LEVELS else closest(value.upper(), LEVELS)
    raise ValueError(f"Unknown {variable} {value!r}. Valid values are TRACE, DEBUG, INFO, WARN, ERR and OFF{hint}.")


def level_of(module: str) -> str:
    """The level ``module`` logs at: ``POPLAR_<MODULE>_LOG_LEVEL``, else ``POPLAR_LOG_LEVEL``, else OFF.

    Raises:
      ValueError: for a value that is not a level, naming the variable and the valid values.
    """
    default = _parse(LEVEL_VARIABLE, os.environ.get(LEVEL_VARIABLE, "OFF"))  # checked even when a module's is set
    variable = f"POPLAR_{module}_LOG_LEVEL"
    own = os.environ.get(variable)
    return LEVELS[default if own is None else _parse(variable, own)]


def enabled(module: str, level: str) -> bool:
    """Whether a ``level`` line of ``module`` would be written now."""
    return LEVELS.index(level) >= LEVELS.index(level_of(module)) and level != "OFF"


def format_line(module: str, level: str, message: str, when: datetime.datetime, pid: int, thread: int) -> str:
    """One log line in Poplar's format."""
    stamp = when.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return f"{stamp} PO:{module:<{_NAME_WIDTH}} {pid}.{thread} {level[0]}: {message}"


def log(module: str, level: str, message: str) -> None:
    """Write ``message`` as a ``module`` line at ``level`` (TRACE to ERR) where POPLAR_LOG_DEST says, if enabled.

    Raises:
      ValueError: for a bad POPLAR_LOG_LEVEL, POPLAR_<MODULE>_LOG_LEVEL or POPLAR_LOG_DEST.
    """
    if module not in MODULES or level not in LEVELS[:-1]:
        raise ValueError(f"poplar_log.log: module must be one of {MODULES} and level one of {LEVELS[:-1]}")
    if not enabled(module, level):
        return
    now = datetime.datetime.now(datetime.timezone.utc)
    _write(format_line(module, level, message, now, os.getpid(), threading.get_native_id()))


def _write(line: str) -> None:
    dest = os.environ.get(DEST_VARIABLE, "stderr")
    if dest in ("stdout", "stderr"):
        stream = sys.stdout if dest == "stdout" else sys.stderr  # looked up now: a notebook replaces them
        print(line, file=stream, flush=True)
        return
    if dest == "" or os.path.isdir(dest):
        raise ValueError(
            f"{DEST_VARIABLE}={dest!r} is not a file name: set it to stdout, stderr (the default) or the name of "
            "the file to append the log to"
        )
    folder = os.path.dirname(os.path.abspath(dest))
    os.makedirs(folder, exist_ok=True)  # as spdlog's file sink does
    with open(dest, "a", encoding="utf-8") as stream:
        stream.write(line + "\n")


def attached(configuration) -> None:
    """PO:TARGET: the IPUs ``configure_ipu_system`` attached, or that it compiles for without attaching."""
    spec = configuration.spec
    what = (
        f"device {configuration.device_id} of the simulated {configuration.system}: {configuration.num_ipus} x "
        f"{spec.name} IPU{'s' if configuration.num_ipus > 1 else ''}, {spec.tiles:,} tiles each"
    )
    if configuration.runs:
        log("TARGET", "INFO", f"Attached to {what}")
    else:
        log(
            "TARGET",
            "INFO",
            f"Compiling for {what}; not attaching (device_connection.type is {configuration.connection.name})",
        )


def compiled(name: str, mode: str, executable) -> None:
    """PO:ENGINE / PO:GRAPH: an executable compiled (or loaded from the cache), its compute sets, memory and time."""
    graph, timeline = executable.graph, executable.timeline
    spec = graph.spec
    what = f"`{name}` ({mode}, micro-batch {graph.micro_batch}, {executable.steps_per_execution} step(s) per execution)"
    if executable.from_cache:
        log(
            "ENGINE",
            "INFO",
            f"Loaded {what} from the executable cache: {hardware.HOST.executable_load_s:,.1f} s simulated",
        )
    else:
        log(
            "ENGINE",
            "INFO",
            f"Compiled {what}: {graph.compute_sets} compute sets on {timeline.ipus} IPU(s), "
            f"{executable.compile_seconds:,.1f} s simulated",
        )
    if executable.out_of_memory is not None:
        log(
            "ENGINE",
            "WARN",
            f"{str(executable.out_of_memory).splitlines()[0]} (debug.allowOutOfMemory is set: the program compiled "
            "but cannot run)",
        )
    if enabled("GRAPH", "DEBUG"):
        for step in graph.steps:
            busy = step.cycles.max(initial=0)
            tiles = int(np.count_nonzero(step.cycles if busy else step.received))
            log(
                "GRAPH",
                "DEBUG",
                f"Compute set {step.name} ({step.phase}, {step.unit if busy else 'exchange'}): {tiles} tiles, "
                f"{int(busy):,} cycles on the busiest tile, {int(step.received.sum()):,} bytes received by exchange",
            )
        memory = graph.tile_memory()
        fullest = int(np.argmax(memory))
        log(
            "GRAPH",
            "DEBUG",
            f"Memory: {int(memory.sum()):,} bytes in all; the fullest tile, {fullest}, holds {int(memory[fullest]):,} "
            f"of its {spec.sram_per_tile:,} bytes",
        )
    if enabled("ENGINE", "DEBUG"):
        from .explain import time_parts

        parts = ", ".join(f"{part} {cycles:,}" for part, cycles in time_parts(timeline).items() if cycles)
        log("ENGINE", "DEBUG", f"One execution of {what}: {timeline.total_cycles():,} cycles ({parts}), simulated")
    if enabled("GRAPH", "TRACE"):
        memory, busy = graph.tile_memory(), timeline.tile_busy.max(axis=0)
        for tile in range(spec.tiles):
            log(
                "GRAPH",
                "TRACE",
                f"Tile {tile}: {int(memory[tile]):,} bytes ({memory[tile] / spec.sram_per_tile:.1%} of its memory), "
                f"{int(busy[tile]):,} compute cycles per execution",
            )


def ran(name: str, mode: str, executable, steps: int, seconds: float, runs: bool) -> None:
    """PO:ENGINE at DEBUG: one execution of ``steps`` steps, and the simulated seconds it cost."""
    if not runs:
        log("ENGINE", "DEBUG", f"`{name}` ({mode}) compiled only: not run (the IPUs are not attached)")
        return
    log(
        "ENGINE",
        "DEBUG",
        f"Engine::run `{name}` ({mode}): one execution of {steps} step(s), {_duration(seconds)} simulated"
        + ("" if seconds <= executable.seconds_per_execution else " with the compile time of its first run"),
    )


def _duration(seconds: float) -> str:
    return f"{seconds:,.3f} s" if seconds >= 1 else f"{seconds * 1e6:,.1f} us"
