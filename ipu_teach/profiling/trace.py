"""The execution of a report as a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing)."""

from __future__ import annotations

from ..bsp import trace as bsp_trace
from .report import Report


def chrome_trace_events(report: Report, max_supersteps: int = bsp_trace.MAX_TRACED_SUPERSTEPS) -> list:
    return bsp_trace.chrome_trace_events(report.execution.timeline(), max_supersteps)


def write_chrome_trace(report: Report, path, max_supersteps: int = bsp_trace.MAX_TRACED_SUPERSTEPS) -> str:
    """Writes the execution of a report as Chrome trace JSON to ``path``, atomically, and returns the path.

    One process per IPU, one thread per phase (sync, exchange, compute), in simulated microseconds: open it
    in https://ui.perfetto.dev or chrome://tracing, as PopVision's execution trace.

    Args:
      report: A ``Report``.
      path: The file to write (string or path-like).
      max_supersteps: Integer, the most supersteps traced.

    Returns:
      The path written, a string.

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> profiling.write_chrome_trace(report, "trace.json")
    'trace.json'
    """
    return bsp_trace.write_chrome_trace(report.execution.timeline(), path, max_supersteps)
