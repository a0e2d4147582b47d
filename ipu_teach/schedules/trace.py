"""Chrome-trace (Perfetto) export of timed schedules: one process per pipeline, one thread per IPU.

Open the JSON in https://ui.perfetto.dev or chrome://tracing. Times are *simulated* seconds of the
cost model, written in microseconds as the format expects; process names say "simulated".
"""

from __future__ import annotations

import json
import os
from typing import Sequence

import numpy as np

from ..atomic import atomic_write
from .timing import ScheduleTiming

_CATEGORY = {"F": "forward", "B": "backward", "WU": "weight update"}


MAX_TRACED_ACTIONS = 30_000
"""Actions traced in all (a few MB of JSON): like the superstep trace's ``MAX_TRACED_SUPERSTEPS``, a cap
keeps a run of 65,536 micro-batches from writing hundreds of MB. The trace says when it is cut. Beyond the
timeline's own arrays, the work and memory follow the cap: only the actions traced become objects."""


def chrome_trace(timelines: ScheduleTiming | Sequence[ScheduleTiming], max_actions: int = MAX_TRACED_ACTIONS) -> dict:
    """The trace as a JSON-ready dict; pipeline i (e.g. replica i) becomes process id i. At most
    ``max_actions`` actions (the first of each pipeline, in time order); when cut, each process name and
    ``otherData`` say how many of how many are shown."""
    timelines = [timelines] if isinstance(timelines, ScheduleTiming) else list(timelines)
    if isinstance(max_actions, bool) or not isinstance(max_actions, int) or max_actions < 1:
        raise ValueError(f"chrome_trace: max_actions must be a positive integer, got {max_actions!r}")
    per_pipeline = max(1, max_actions // max(len(timelines), 1))
    events, traced, total = [], 0, 0
    for pid, timeline in enumerate(timelines):
        # the first actions in time, ties in row order; only those become Action objects
        shown = np.argsort(timeline.start, kind="stable")[:per_pipeline].tolist()
        actions = len(timeline.schedule)
        traced, total = traced + len(shown), total + actions
        mode = "lock-step" if timeline.lockstep else "event-driven"
        cut = f"; first {len(shown):,} of {actions:,} actions" if len(shown) < actions else ""
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": pid,
                "tid": 0,
                "args": {"name": f"pipeline {pid}: {timeline.schedule.name} ({mode}, simulated{cut})"},
            }
        )
        for ipu in range(timeline.schedule.ipus):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": ipu, "args": {"name": f"IPU {ipu}"}})
        for row in shown:
            action, start, end = timeline.schedule.action(row), float(timeline.start[row]), float(timeline.end[row])
            events.append(
                {
                    "ph": "X",
                    "name": str(action),
                    "cat": _CATEGORY[action.kind.value],
                    "pid": pid,
                    "tid": action.ipu,
                    "ts": start * 1e6,
                    "dur": (end - start) * 1e6,
                    "args": {"stage": action.stage, "micro_batch": action.micro_batch, "slot": action.slot},
                }
            )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"simulated": True, "actions_traced": traced, "actions_total": total, "truncated": traced < total},
    }


def write_chrome_trace(
    path: str | os.PathLike, timelines: ScheduleTiming | Sequence[ScheduleTiming], max_actions: int = MAX_TRACED_ACTIONS
) -> str:
    """Write the trace to ``path`` atomically (a temporary file in the same folder, then a rename); a cut
    trace is also announced in one printed line, so nobody reads a partial trace as the whole run."""
    path = os.fspath(path)
    trace = chrome_trace(timelines, max_actions)
    with atomic_write(path) as stream:
        json.dump(trace, stream)
    other = trace["otherData"]
    if other["truncated"]:
        print(
            f"Chrome trace {path}: the first {other['actions_traced']:,} of {other['actions_total']:,} actions "
            f"(cap max_actions={max_actions:,})"
        )
    return path
