"""Chrome-trace (Perfetto) export of timed schedules: one process per pipeline, one thread per IPU.

Open the JSON in https://ui.perfetto.dev or chrome://tracing. Times are *simulated* seconds of the
cost model, written in microseconds as the format expects; process names say "simulated".
"""
from __future__ import annotations

import json
import os
from typing import Sequence

from ..atomic import atomic_write
from .timing import Timeline

_CATEGORY = {"F": "forward", "B": "backward", "WU": "weight update"}


def chrome_trace(timelines: Timeline | Sequence[Timeline]) -> dict:
    """The trace as a JSON-ready dict; pipeline i (e.g. replica i) becomes process id i."""
    timelines = [timelines] if isinstance(timelines, Timeline) else list(timelines)
    events = []
    for pid, timeline in enumerate(timelines):
        mode = "lock-step" if timeline.lockstep else "event-driven"
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                        "args": {"name": f"pipeline {pid}: {timeline.schedule.name} ({mode}, simulated)"}})
        for ipu in range(timeline.schedule.ipus):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": ipu, "args": {"name": f"IPU {ipu}"}})
        for timed in timeline.timed_actions():
            action = timed.action
            events.append({"ph": "X", "name": str(action), "cat": _CATEGORY[action.kind.value], "pid": pid,
                           "tid": action.ipu, "ts": timed.start * 1e6, "dur": (timed.end - timed.start) * 1e6,
                           "args": {"stage": action.stage, "micro_batch": action.micro_batch, "slot": action.slot}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(path: str | os.PathLike, timelines: Timeline | Sequence[Timeline]) -> str:
    """Write the trace to ``path`` atomically (a temporary file in the same folder, then a rename)."""
    path = os.fspath(path)
    with atomic_write(path) as stream:
        json.dump(chrome_trace(timelines), stream)
    return path
