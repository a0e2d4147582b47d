"""Explaining an executable: each lowered op's work and cost, and where one execution's time comes from.

Every cycle shown is read from the Engine's timeline of the executable (the one its time and its profile
come from); the op table adds what the lowering knows of each op (FLOPs, the unit, the tiles it uses, the
bytes it receives by exchange, its temporary memory).
"""

from __future__ import annotations

import numpy as np

from .. import hardware

OP_COLUMNS = (
    ("layer", "<", 14),
    ("op", "<", 34),
    ("phase", "<", 11),
    ("FLOPs", ">", 13),
    ("unit", "<", 9),
    ("tiles", ">", 6),
    ("runs", ">", 6),
    ("cycles", ">", 13),
    ("exchange B", ">", 12),
    ("temporary B", ">", 12),
)
"""The op table's columns: name, alignment, width."""
PARTS = (
    ("compute", "compute sets: the busiest tile's compute"),
    ("exchange", "compute sets: exchange between tiles"),
    ("sync", "compute sets: on-chip syncs"),
    ("host streams", "host streams (infeed, outfeed): host syncs and PCIe"),
    ("host wait", "waiting for a late host's input pipeline (StreamCopyBegin)"),
    ("ipu-link", "IPU-Link copies (all-reduce, pipeline stage transfers) and their syncs"),
    ("streaming memory", "Streaming Memory copies (offloaded optimizer state) and their syncs"),
    ("waiting", "pipeline slots: syncs and waiting for the slowest IPU"),
)
"""The parts of one execution's device time, as :func:`time_parts` splits it."""


def _row(values, columns=OP_COLUMNS) -> str:
    return "".join(
        f"{str(value)[: width - 1]:{align}{width - 1}} " for value, (_, align, width) in zip(values, columns)
    ).rstrip()


def _columns(graph) -> tuple:
    """The op table's columns, the layer and op columns widened to their longest name: names are never cut
    (a reduction's stages differ only at the end of theirs)."""
    names = [step.name.partition("/")[::2] for step in graph.steps]
    widths = {
        "layer": max((len(layer) for layer, _ in names), default=0) + 1,
        "op": max((len(op or layer) for layer, op in names), default=0) + 1,
    }
    return tuple((name, align, max(width, widths.get(name, 0))) for name, align, width in OP_COLUMNS)


def op_cycles(timeline) -> dict:
    """``{step label: cycles in one execution}``: each run of the step costs its superstep on the IPU it runs
    on (a replicated step costs the same on every replica's IPU, counted once)."""
    per_row = timeline.counts * (timeline.compute + timeline.sync + timeline.exchange).max(axis=1, initial=0)
    cycles = {}
    for label, value in zip(timeline.labels, per_row.tolist()):
        cycles[label] = cycles.get(label, 0) + value
    return cycles


def op_runs(timeline) -> dict:
    """``{step label: how many times it runs in one execution}``."""
    runs = {}
    for label, count in zip(timeline.labels, timeline.counts.tolist()):
        runs[label] = runs.get(label, 0) + count
    return runs


def time_parts(timeline) -> dict:
    """Cycles of one execution on its busiest IPU, split into :data:`PARTS` (they add up to its total)."""
    ipu = int(np.argmax(timeline.ipu_cycles())) if timeline.ipus else 0
    parts = dict.fromkeys((name for name, _ in PARTS), 0)
    for r, kind in enumerate(timeline.kinds):
        count = int(timeline.counts[r])
        compute, sync, exchange = (int(getattr(timeline, c)[r, ipu]) * count for c in ("compute", "sync", "exchange"))
        if kind in ("compute", "exchange"):
            parts["compute"] += compute
            parts["exchange"] += exchange
            parts["sync"] += sync
        elif kind in ("host->device", "device->host"):
            parts["host streams"] += compute + sync + exchange
        elif kind == "host wait":
            parts["host wait"] += compute + sync + exchange
        elif kind in ("ipu-link", "streaming memory"):
            parts[kind] += compute + sync + exchange
        else:
            parts["waiting"] += compute + sync + exchange
    return parts


def explain(executable) -> str:
    """Returns the text of :meth:`Executable.explain <ipu_teach.ipu.executor.Executable.explain>`."""
    graph, timeline = executable.graph, executable.timeline
    spec = timeline.spec
    cycles, runs = op_cycles(timeline), op_runs(timeline)
    lines = [
        f"{graph.mode} executable, micro-batch {graph.micro_batch}, on {timeline.ipus} IPU(s) of {spec.name}"
        + (f", pipelined ({executable.pipeline.schedule.name})" if executable.pipeline is not None else "")
        + "; one execution, simulated",
    ]
    columns = _columns(graph)
    lines.append(_row((name for name, _, _ in columns), columns))
    for step in graph.steps:
        layer, _, op = step.name.partition("/")
        computes = bool(step.cycles.any())
        lines.append(
            _row(
                (
                    layer,
                    op or layer,
                    step.phase,
                    f"{step.flops:,}",
                    step.unit if computes else "exchange",
                    int(np.count_nonzero(step.cycles)) if computes else int(np.count_nonzero(step.received)),
                    f"{runs.get(step.name, 0):,}",
                    f"{cycles.get(step.name, 0):,}",
                    f"{int(step.received.sum()):,}",
                    f"{int(step.temporary.sum()) if step.temporary is not None else 0:,}",
                ),
                columns,
            )
        )
    to_us = 1e6 / spec.clock_hz
    steps = executable.steps_per_execution
    device = timeline.total_cycles()
    overhead = executable.seconds_per_execution - timeline.seconds()
    lines += [
        "",
        f"Where one execution's time comes from (simulated, on the busiest IPU; {steps:,} step(s) per execution):",
        f"  {'':<72}{'cycles':>14} {'per execution':>15} {'per step':>12}",
    ]

    def line(what, seconds, cycles=None):
        counted = "" if cycles is None else f"{cycles:,}"
        return f"  {what:<72}{counted:>14} {seconds * 1e6:>12,.1f} us {seconds * 1e6 / steps:>9,.1f} us"

    parts = time_parts(timeline)
    lines += [line(what, parts[name] * to_us / 1e6, parts[name]) for name, what in PARTS if parts[name]]
    lines += [
        line("the device in all", device * to_us / 1e6, device),
        line("the host: calling the execution from its front end (hardware.HostSpec)", overhead),
        line("one execution (seconds_per_execution)", executable.seconds_per_execution),
        f"  the first run also pays {_first_run(executable)}",
    ]
    return "\n".join(lines)


def _first_run(executable) -> str:
    if executable.from_cache:
        return f"loading it from the executable cache: {hardware.HOST.executable_load_s:,.1f} s simulated"
    return f"compiling it: {executable.compile_seconds:,.1f} s simulated"
