"""Reports on disk: versioned JSON, written atomically, one folder per executable, opened by path."""

from __future__ import annotations

import json
import reprlib
from pathlib import Path

import numpy as np

from ..atomic import atomic_write
from ..bsp.timeline import CYCLE_LIMIT
from ..untrusted import read_json
from ..validation import BadFileError, bad_file, safe_file_name
from .report import Compilation, ComputeSet, Execution, ExecutionStep, Program, Report, StepIPU, Target, Variable

FORMAT = "ipu-teach-profile"
VERSION = 2
READABLE_VERSIONS = (1, 2)
"""Version 2 reports hold the bytes each tile needs with not-always-live tensors sharing memory (``tileTotals``);
version 1 held the sum of every variable there. Everything else is the same, so both open."""
FILE_NAME = "profile.json"


def report_to_dict(report: Report) -> dict:
    c, e = report.compilation, report.execution
    return {
        "format": FORMAT,
        "version": VERSION,
        "simulated": True,
        "model": report.model,
        "mode": report.mode,
        "executable": report.executable,
        "options": report.options,
        "compilation": {
            "target": vars(c.target),
            "variables": [
                {
                    "name": v.name,
                    "category": v.category,
                    "ipu": v.ipu,
                    "perTile": v.perTile.tolist(),
                    "alwaysLive": v.alwaysLive,
                    "liveFrom": v.liveFrom,
                    "liveUntil": v.liveUntil,
                }
                for v in c.variables
            ],
            "programSteps": c.programSteps,
            "computeSets": [vars(s) for s in c.computeSets],
            "program": _program_to_dict(c.program),
            "tileTotals": c.tileTotals.tolist(),
        },
        "execution": {
            "steps": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "count": s.count,
                    "flops": s.flops,
                    "bytesExchanged": s.bytesExchanged,
                    "ipus": [vars(i) for i in s.ipus],
                }
                for s in e.steps
            ],
            "schedule": _schedule_to_list(e.schedule),
            "tileBusyCycles": e.tileBusyCycles.tolist(),
            "clockFrequency": e.clockFrequency,
            "ipuName": e.ipuName,
        },
    }


MAX_REPORT_BYTES = 128 * 2**20
"""A report of the tutorial's model pipelined over 2 IPUs is 0.4 MiB; a larger file is refused unread."""
WHAT = "ipu-teach profile report"
REMEDY = "open a profile.json written by ipu-teach (capture the report again if it was changed or cut short)"


def report_from_dict(data: dict, path: str | None = None) -> Report:
    """The Report of ``data``; anything missing, of the wrong type or impossible (a clock of 0 Hz) is a
    BadFileError naming the file: a report may come from someone else."""
    where = path or "the report"
    if not isinstance(data, dict):
        raise bad_file(where, WHAT, f"it holds {json.dumps(data)[:40]} instead of a JSON object", REMEDY)
    if data.get("format") != FORMAT:
        raise ValueError(f"{where} is not an ipu-teach profile (format {data.get('format')!r}, expected {FORMAT!r})")
    if data.get("version") not in READABLE_VERSIONS:
        raise ValueError(
            f"{where} has format version {data.get('version')!r}; this ipu-teach reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}: capture the report again with this version"
        )
    try:
        report = _report(data, path)
        _check_consistent(report, where)
        _check_repeats(data, where)
    except BadFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as error:
        raise bad_file(
            where, WHAT, f"a part is missing or malformed ({type(error).__name__}: {str(error)[:200]})", REMEDY
        ) from None
    return report


def _check_consistent(report: Report, where: str) -> None:
    target, execution = report.compilation.target, report.execution
    problems = [
        f"{name} is {value!r}, expected a positive number"
        for name, value in (
            ("target.clockFrequency", target.clockFrequency),
            ("execution.clockFrequency", execution.clockFrequency),
            ("target.numIPUs", target.numIPUs),
            ("target.tilesPerIPU", target.tilesPerIPU),
            ("target.bytesPerTile", target.bytesPerTile),
        )
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
    ]
    shape = (target.numIPUs, target.tilesPerIPU)
    if not problems and report.compilation.tileTotals.shape != shape:
        problems.append(f"tileTotals has shape {report.compilation.tileTotals.shape}, expected {shape}")
    mistyped = [
        position
        for position, v in enumerate(report.compilation.variables)
        if not (isinstance(v.name, str) and isinstance(v.category, str) and type(v.ipu) is int)
    ]
    if not problems and mistyped:
        problems.append(f"variable {mistyped[0]} needs a name and a category (text) and an IPU (an integer)")
    misplaced = [
        v.name
        for v in report.compilation.variables
        if not problems and (not 0 <= v.ipu < target.numIPUs or v.perTile.shape != (target.tilesPerIPU,))
    ]
    if misplaced:
        problems.append(f"variable {misplaced[0]!r} is not mapped to the tiles of one IPU of the target")
    if problems:
        raise bad_file(where, WHAT, "; ".join(problems), REMEDY)


def _report(data: dict, path) -> Report:
    c, e = data["compilation"], data["execution"]
    compilation = Compilation(
        Target(**c["target"]),
        [
            Variable(
                v["name"],
                v["category"],
                v["ipu"],
                np.asarray(v["perTile"], dtype=np.int64),
                v["alwaysLive"],
                v["liveFrom"],
                v["liveUntil"],
            )
            for v in c["variables"]
        ],
        [list(names) for names in c["programSteps"]],
        [ComputeSet(**s) for s in c["computeSets"]],
        _program_from_dict(c["program"]),
        np.asarray(c["tileTotals"], dtype=np.int64),
    )
    execution = Execution(
        [
            ExecutionStep(
                s["name"],
                s["kind"],
                s["count"],
                tuple(StepIPU(**i) for i in s["ipus"]),
                s["flops"],
                s["bytesExchanged"],
            )
            for s in e["steps"]
        ],
        _schedule_from_list(e["schedule"]),
        np.asarray(e["tileBusyCycles"], dtype=np.int64),
        e["clockFrequency"],
        e["ipuName"],
    )
    return Report(data["model"], data["mode"], data["executable"], compilation, execution, data["options"], path)


def write_report(report: Report, directory) -> str:
    """Write ``report`` to ``directory/<model>_<mode>_<key>/profile.json`` atomically; return the path.
    Characters of the model name that could leave ``directory`` (``/``, ``..``) become ``_``."""
    path = Path(directory) / safe_file_name(report.name) / FILE_NAME  # a model named "../x" stays inside
    with atomic_write(path) as file:
        json.dump(report_to_dict(report), file)
    report.path = str(path)
    return str(path)


def open_report(path) -> Report:
    """Opens a profile report written by ipu-teach: its ``profile.json`` or the folder that holds it.

    The report has PopVision's two halves: ``report.compilation`` (target, memory per tile by category,
    variables, liveness) and ``report.execution`` (the steps of one execution, their cycles per IPU).

    Args:
      path: A ``profile.json`` file or its folder (string or path-like).

    Returns:
      The ``Report``.

    Raises:
      FileNotFoundError: if there is no report there (the message says where reports are written).
      BadFileError: if it is not a report ipu-teach wrote: not a regular file, over
        ``MAX_REPORT_BYTES``, not JSON, nested deeper than 100, or with parts missing or impossible.

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import small_report
    >>> _ = small_report()                     # writes a report in ./report
    >>> report = profiling.open_report(profiling.last_report_path())
    >>> report.name, report.compilation.target.numIPUs
    ('sequential_train_...', 1)
    """
    path = Path(path)
    if path.is_dir():
        path = path / FILE_NAME
    if not path.exists():
        raise FileNotFoundError(
            f"No report at {path}: reports are written as <autoReport.directory>/"
            f"<model>_<mode>_<key>/{FILE_NAME} (turn them on with profiling.auto_report)"
        )
    return report_from_dict(read_json(path, WHAT, REMEDY, MAX_REPORT_BYTES), str(path))


def _program_to_dict(program: Program) -> dict:
    return {
        "type": program.type,
        "name": program.name,
        "count": program.count,
        "children": [_program_to_dict(child) for child in program.children],
    }


def _program_from_dict(data: dict) -> Program:
    return Program(data["type"], data["name"], data["count"], tuple(_program_from_dict(c) for c in data["children"]))


def _schedule_to_list(schedule) -> list:
    return [[item[0], _schedule_to_list(item[1])] if isinstance(item, tuple) else int(item) for item in schedule]


def _schedule_from_list(items) -> tuple:
    return tuple(
        (int(item[0]), _schedule_from_list(item[1])) if isinstance(item, list) else int(item) for item in items
    )


def _check_repeats(data: dict, where: str) -> None:
    """A BadFileError naming the field unless every repeat count and cycle figure is an integer a timeline
    can count, the schedule runs each step as often as its ``count`` says and the total fits a timeline: a
    few bytes may claim 10**15 runs, and traces and totals must still mean what they say."""
    steps = data["execution"]["steps"]
    problems = [
        f"{field} is {reprlib.repr(value)}, expected an integer from 0{'' if most is None else f' to {most:,}'}"
        for field, value, most in _counted_figures(data)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (most is not None and value > most)
    ]
    if not problems:
        runs, problems = _runs_of_steps(data["execution"]["schedule"], len(steps))
        problems += [
            f"execution.steps[{index}].count is {step['count']:,} but execution.schedule runs it {_amount(ran)} times"
            for index, (step, ran) in enumerate(zip(steps, runs))
            if step["count"] != ran
        ][:1]
    if not problems:
        ipu_cycles = {}
        for step in steps:
            for ipu, figures in enumerate(step["ipus"]):
                cycles = figures["computeCycles"] + figures["syncCycles"] + figures["exchangeCycles"]
                ipu_cycles[ipu] = ipu_cycles.get(ipu, 0) + step["count"] * cycles
        if max(ipu_cycles.values(), default=0) > CYCLE_LIMIT:
            problems.append(f"its steps run more than the {CYCLE_LIMIT:,} cycles a timeline counts")
    if problems:
        raise bad_file(where, WHAT, problems[0], REMEDY)


def _counted_figures(data: dict):
    """``(field, value, most)`` of every repeat count and per-execution cycle figure of the report: what a
    timeline counts is at most CYCLE_LIMIT; a loop's count (None: no bound) may be larger if its body is empty."""
    for index, step in enumerate(data["execution"]["steps"]):
        yield f"execution.steps[{index}].count", step["count"], CYCLE_LIMIT
        for ipu, figures in enumerate(step["ipus"]):
            for name in ("computeCycles", "syncCycles", "exchangeCycles"):
                yield f"execution.steps[{index}].ipus[{ipu}].{name}", figures[name], CYCLE_LIMIT
    nodes = [("compilation.program", data["compilation"]["program"])]
    while nodes:  # a stack, not recursion: nesting as deep as the file
        field, node = nodes.pop()
        yield f"{field}.count", node["count"], None
        nodes += [(f"{field}.children[{i}]", child) for i, child in enumerate(node["children"])]


def _runs_of_steps(schedule, steps: int) -> tuple:
    """How often ``schedule`` (step indices and nested ``[count, items]``) runs each step, saturated just above
    CYCLE_LIMIT (nested counts multiply up), and the first problem with it (a list of at most one message)."""
    beyond = CYCLE_LIMIT + 1
    runs = [0] * steps
    pending = [("execution.schedule", schedule, 1)]
    while pending:
        field, items, multiplier = pending.pop()
        for i, item in enumerate(items):
            here = f"{field}[{i}]"
            if isinstance(item, int) and not isinstance(item, bool) and 0 <= item < steps:
                runs[item] = min(runs[item] + multiplier, beyond)
            elif isinstance(item, list) and len(item) == 2 and isinstance(item[1], list):
                count = item[0]
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    return runs, [
                        f"{here}[0] is {reprlib.repr(count)}, expected a non-negative integer (a repeat count)"
                    ]
                pending.append((f"{here}[1]", item[1], min(multiplier * count, beyond)))
            else:
                expected = f"a step index (0 to {steps - 1}) or [count, [items]]"
                return runs, [f"{here} is {reprlib.repr(item)}, expected {expected}"]
    return runs, []


def _amount(number: int) -> str:
    """``number`` with thousands separators, or "more than <CYCLE_LIMIT>" for a saturated count."""
    return f"{number:,}" if number <= CYCLE_LIMIT else f"more than {CYCLE_LIMIT:,}"
