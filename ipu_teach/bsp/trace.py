"""Export a Timeline as Chrome-trace JSON (opens in Perfetto or chrome://tracing).

One process per IPU, one thread per phase (sync, exchange, compute); times are simulated
microseconds at the IPU's clock, rounded to the picosecond. Loops are expanded in execution order up to ``max_supersteps``.
"""
from __future__ import annotations

import json
import os

from ..atomic import atomic_write
from .timeline import PHASE_ORDER

MAX_TRACED_SUPERSTEPS = 10_000


def chrome_trace_events(timeline, max_supersteps: int = MAX_TRACED_SUPERSTEPS) -> list:
    """Trace events (dicts with name/ph/ts/dur/pid/tid/args), metadata events first."""
    events = []
    for ipu in range(timeline.ipus):
        events.append({"name": "process_name", "ph": "M", "pid": ipu, "tid": 0,
                       "args": {"name": f"IPU {ipu} ({timeline.spec.name}, simulated)"}})
        for tid, category in enumerate(PHASE_ORDER):
            events.append({"name": "thread_name", "ph": "M", "pid": ipu, "tid": tid, "args": {"name": category}})
    to_us = 1e6 / timeline.spec.clock_hz
    clocks = [0] * timeline.ipus
    for row in timeline.first_supersteps(max_supersteps):
        for ipu in range(timeline.ipus):
            for tid, category in enumerate(PHASE_ORDER):
                cycles = int(getattr(timeline, category)[row, ipu])
                if cycles:
                    events.append({"name": timeline.labels[row], "cat": category, "ph": "X",
                                   "ts": round(clocks[ipu] * to_us, 6), "dur": round(cycles * to_us, 6),
                                   "pid": ipu, "tid": tid,
                                   "args": {"cycles": cycles, "kind": timeline.kinds[row]}})
                clocks[ipu] += cycles
    return events


def write_chrome_trace(timeline, path, max_supersteps: int = MAX_TRACED_SUPERSTEPS) -> str:
    """Write the trace JSON to ``path`` atomically (temp file in the same folder, then rename)."""
    path = os.fspath(path)
    payload = {"traceEvents": chrome_trace_events(timeline, max_supersteps), "displayTimeUnit": "ns",
               "otherData": {"simulated": True, "ipu": timeline.spec.name, "total_cycles": timeline.total_cycles()}}
    with atomic_write(path) as file:
        json.dump(payload, file)
    return path
