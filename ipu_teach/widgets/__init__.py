"""Interactive widgets (ipywidgets + matplotlib, imported only when a widget is used).

Each explorer has a plain function that draws the same figure, for tests and stable notebook output.

Example:

>>> from ipu_teach.widgets.pipeline import draw_pipeline
>>> figure, view = draw_pipeline("Grouped", stages=2, accumulation=4)
>>> view.metrics.total_seconds
16.0
"""

import importlib

_LAZY = {
    "PipelineExplorer": ".pipeline",
    "TileMemoryExplorer": ".tile_memory",
    "plot_tile_memory": ".tile_memory",
    "ExecutionTraceView": ".execution_trace",
    "plot_execution_trace": ".execution_trace",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'ipu_teach.widgets' has no attribute {name!r}; available: {', '.join(__all__)}")
    return getattr(importlib.import_module(_LAZY[name], __name__), name)
