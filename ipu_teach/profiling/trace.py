"""The execution of a report as a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing)."""
from __future__ import annotations

from ..bsp import trace as bsp_trace
from .report import Report


def chrome_trace_events(report: Report, max_supersteps: int = bsp_trace.MAX_TRACED_SUPERSTEPS) -> list:
    return bsp_trace.chrome_trace_events(report.execution.timeline(), max_supersteps)


def write_chrome_trace(report: Report, path, max_supersteps: int = bsp_trace.MAX_TRACED_SUPERSTEPS) -> str:
    """One process per IPU, one thread per phase, simulated microseconds; written atomically."""
    return bsp_trace.write_chrome_trace(report.execution.timeline(), path, max_supersteps)
