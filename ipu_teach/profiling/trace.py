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
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.ipu_model.tiles_per_ipu = 16
    >>> config.configure_ipu_system()
    >>> with profiling.auto_report("report"), ipu.ipu_strategy.IPUStrategy().scope():
    ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    ...     model.compile("sgd", "mse", steps_per_execution=2)
    ...     history = model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
    >>> report = profiling.open_report(profiling.last_report_path())
    >>> profiling.write_chrome_trace(report, "trace.json")
    'trace.json'
    """
    return bsp_trace.write_chrome_trace(report.execution.timeline(), path, max_supersteps)
