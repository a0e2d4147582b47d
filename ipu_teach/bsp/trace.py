"""Export a Timeline as Chrome-trace JSON (opens in Perfetto or chrome://tracing).

One process per IPU, one thread per phase (sync, exchange, compute); times are simulated
microseconds at the IPU's clock, rounded to the picosecond. Loops are expanded in execution order up to
``max_supersteps``: the work is in proportion to what is traced, however large the loops' counts, and a cut
trace says so (in each process name, ``otherData`` and one printed line), as the pipeline trace does.

Example:

>>> from ipu_teach import bsp, hardware
>>> from ipu_teach.bsp import trace
>>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("work", [100, 50]))
>>> timeline = bsp.CostEngine(step, hardware.MK2.with_tiles(2)).run()
>>> sorted({event["cat"] for event in trace.chrome_trace_events(timeline) if event["ph"] == "X"})
['compute', 'sync']
"""

from __future__ import annotations

import json
import os

from ..atomic import atomic_write
from .timeline import PHASE_ORDER

MAX_TRACED_SUPERSTEPS = 10_000


def traced_supersteps(timeline, max_supersteps: int) -> tuple:
    """``(traced, total)``: how many supersteps a trace capped at ``max_supersteps`` shows, of how many."""
    if isinstance(max_supersteps, bool) or not isinstance(max_supersteps, int) or max_supersteps < 1:
        raise ValueError(f"Chrome trace: max_supersteps must be a positive integer, got {max_supersteps!r}")
    total = timeline.supersteps
    return min(total, max_supersteps), total


def chrome_trace_events(timeline, max_supersteps: int = MAX_TRACED_SUPERSTEPS) -> list:
    """Returns a Timeline as Chrome trace events: dicts with name/ph/ts/dur/pid/tid/args, metadata events first.

    One process per IPU and one thread per phase (sync, exchange, compute), in simulated microseconds:
    the format Perfetto and chrome://tracing open, close to what PopVision's execution trace shows.

    Args:
      timeline: A ``bsp.Timeline``.
      max_supersteps: Integer, the most supersteps traced (a long loop is cut there, and each process name
        says "first N of M supersteps").

    Returns:
      A list of dicts.

    Raises:
      ValueError: if ``max_supersteps`` is not a positive integer.

    Example:

    >>> from ipu_teach.examples import small_timeline
    >>> timeline = small_timeline()      # 10 runs of one superstep on 4 tiles
    >>> from ipu_teach.bsp import trace
    >>> events = trace.chrome_trace_events(timeline)
    >>> first = [e for e in events if e["ph"] == "X"][0]
    >>> first["name"], first["cat"], first["args"]["cycles"]
    ('matmul', 'sync', 150)
    """
    traced, total = traced_supersteps(timeline, max_supersteps)
    cut = f"; first {traced:,} of {total:,} supersteps" if traced < total else ""
    events = []
    for ipu in range(timeline.ipus):
        events.append(
            {
                "name": "process_name",
                "ph": "M",
                "pid": ipu,
                "tid": 0,
                "args": {"name": f"IPU {ipu} ({timeline.spec.name}, simulated{cut})"},
            }
        )
        for tid, category in enumerate(PHASE_ORDER):
            events.append({"name": "thread_name", "ph": "M", "pid": ipu, "tid": tid, "args": {"name": category}})
    to_us = 1e6 / timeline.spec.clock_hz
    clocks = [0] * timeline.ipus
    for row in timeline.first_supersteps(max_supersteps):
        for ipu in range(timeline.ipus):
            for tid, category in enumerate(PHASE_ORDER):
                cycles = int(getattr(timeline, category)[row, ipu])
                if cycles:
                    events.append(
                        {
                            "name": timeline.labels[row],
                            "cat": category,
                            "ph": "X",
                            "ts": round(clocks[ipu] * to_us, 6),
                            "dur": round(cycles * to_us, 6),
                            "pid": ipu,
                            "tid": tid,
                            "args": {"cycles": cycles, "kind": timeline.kinds[row]},
                        }
                    )
                clocks[ipu] += cycles
    return events


def write_chrome_trace(timeline, path, max_supersteps: int = MAX_TRACED_SUPERSTEPS) -> str:
    """Writes a Timeline as Chrome trace JSON to ``path``, atomically, and returns the path.

    Open the file in https://ui.perfetto.dev or chrome://tracing. Written to a temporary file in the
    same folder, then renamed, so a reader never sees half a file. A trace cut at ``max_supersteps`` says
    so in ``otherData`` and in one printed line, so nobody reads a partial trace as the whole run.

    Args:
      timeline: A ``bsp.Timeline``.
      path: The file to write (string or path-like).
      max_supersteps: Integer, the most supersteps traced.

    Returns:
      The path written, a string.

    Example:

    >>> from ipu_teach.examples import small_timeline
    >>> timeline = small_timeline()      # 10 runs of one superstep on 4 tiles
    >>> import json
    >>> from ipu_teach.bsp import trace
    >>> path = trace.write_chrome_trace(timeline, "trace.json")
    >>> with open(path) as file:
    ...     json.load(file)["otherData"]["simulated"]
    True
    """
    path = os.fspath(path)
    traced, total = traced_supersteps(timeline, max_supersteps)
    payload = {
        "traceEvents": chrome_trace_events(timeline, max_supersteps),
        "displayTimeUnit": "ns",
        "otherData": {
            "simulated": True,
            "ipu": timeline.spec.name,
            "total_cycles": timeline.total_cycles(),
            "supersteps_traced": traced,
            "supersteps_total": total,
            "truncated": traced < total,
        },
    }
    with atomic_write(path) as file:
        json.dump(payload, file)
    if traced < total:
        print(
            f"Chrome trace {path}: the first {traced:,} of {total:,} supersteps (cap max_supersteps={max_supersteps:,})"
        )
    return path
