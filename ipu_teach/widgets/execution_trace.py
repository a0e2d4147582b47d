"""The execution-trace view: the BSP steps of one execution along simulated time, per IPU, split into
compute / sync / exchange, the cycles per step, and how evenly the tiles were busy (PopVision's
Execution Trace). ``plot_execution_trace`` draws the same figure without widgets.
"""

from __future__ import annotations

import numpy as np

from ..bsp.figures import COLOURS, draw_phase_bars
from ..bsp.timeline import PHASE_ORDER
from .figure_widget import FigureWidget, plot_text

DEFAULT_SUPERSTEPS = 60
TOP_STEPS = 12


def draw_execution_trace(figure, report, ipu: int = 0, max_supersteps: int = DEFAULT_SUPERSTEPS) -> str:
    """Draw on ``figure``: phases over time (top), cycles per step (bottom left), busy cycles per tile
    (bottom right), all for ``ipu``. Returns a one-line caption."""
    execution = report.execution
    if not 0 <= ipu < execution.numIPUs:
        raise ValueError(
            f"plot_execution_trace: IPU {ipu} does not exist; the execution ran on {execution.numIPUs} IPU(s)"
        )
    if max_supersteps < 1:
        raise ValueError(f"plot_execution_trace: max_supersteps must be at least 1, got {max_supersteps}")
    timeline = execution.timeline()
    # two sub-figures, so the long step names of the bottom row do not push the trace to the right
    top, bottom = figure.subfigures(2, 1, height_ratios=[1, 1.4])
    trace, (steps, tiles) = top.subplots(), bottom.subplots(1, 2, width_ratios=[1.25, 1])
    intervals = timeline.phase_intervals(ipu, max_supersteps)
    end = draw_phase_bars(trace, intervals)
    drawn, total = len(intervals["compute"][0]), timeline.supersteps
    trace.set(
        yticks=[],
        xlim=(0, end),
        xlabel=f"simulated cycles (first {drawn:,}{f' of {total:,}' if drawn < total else ''} supersteps)",
        title=plot_text(f"Execution trace of IPU {ipu} ({execution.ipuName}, simulated)"),
    )
    trace.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small", frameon=False)  # beside the bars

    per_run = {c: execution.category_array(c)[:, ipu] * timeline.counts for c in PHASE_ORDER}
    order = np.argsort(-sum(per_run.values()), kind="stable")[:TOP_STEPS]
    left = np.zeros(len(order))
    for category in PHASE_ORDER:
        values = per_run[category][order]
        steps.barh(np.arange(len(order)), values, left=left, color=COLOURS[category])
        left += values
    steps.set_yticks(
        np.arange(len(order)),
        [plot_text(f"{timeline.labels[r]} x{timeline.counts[r]}") for r in order],
        fontsize="x-small",
    )
    steps.invert_yaxis()
    steps.set(xlabel="cycles over the execution", title=f"the {len(order)} costliest steps")

    busy = execution.tileBusyCycles[ipu]
    tiles.fill_between(np.arange(busy.size), busy, step="mid", color=COLOURS["compute"], linewidth=0)
    tiles.axhline(busy.mean(), color="black", linestyle="--", linewidth=1)
    tiles.annotate(
        "mean",
        (1.0, busy.mean()),
        xycoords=("axes fraction", "data"),
        xytext=(2, 0),
        textcoords="offset points",
        va="center",
        fontsize="x-small",
    )  # a legend would hide the bars
    tiles.set(
        xlabel="tile",
        ylabel="busy cycles",
        title=f"tile balance {execution.tile_balance(ipu):.1%}, utilisation {execution.utilisation():.1%}",
    )
    figure.set_layout_engine("constrained")
    totals = {c: int(per_run[c].sum()) for c in PHASE_ORDER}
    return f"IPU {ipu}: {sum(totals.values()):,} cycles per execution (simulated): " + ", ".join(
        f"{c} {v:,}" for c, v in totals.items()
    )


def plot_execution_trace(report, ipu: int = 0, max_supersteps: int = DEFAULT_SUPERSTEPS):
    """Returns the execution-trace view's figure as a pyplot Figure, without widgets.

    The BSP steps of one execution along simulated time, split into compute, sync and exchange, the cycles
    per step, and how evenly the tiles were busy: PopVision's Execution Trace, with a stable output for
    notebooks and tests.

    Args:
      report: A profiling ``Report``.
      ipu: Integer, the IPU shown. Default: 0.
      max_supersteps: Integer, the most supersteps drawn. Default: 60.

    Example:

    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> import matplotlib.pyplot as plt
    >>> from ipu_teach.widgets import plot_execution_trace
    >>> figure = plot_execution_trace(report, max_supersteps=30)
    >>> len(figure.axes)
    3
    >>> plt.close(figure)
    """
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=ExecutionTraceView.figure_size)
    draw_execution_trace(figure, report, ipu, max_supersteps)
    return figure


class ExecutionTraceView(FigureWidget):
    """An ipywidgets view of a report's execution trace: pick an IPU and how many supersteps to show.

    The figure of ``plot_execution_trace`` follows the controls. Display it in a notebook.

    Args:
      report: A profiling ``Report``.
      max_supersteps: Integer, the supersteps shown at first. Default: 60.

    Example:

    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> from ipu_teach.widgets import ExecutionTraceView
    >>> view = ExecutionTraceView(report, max_supersteps=30)
    >>> view.supersteps.value
    30
    """

    figure_size = (10, 6.5)

    def __init__(self, report, max_supersteps: int = DEFAULT_SUPERSTEPS):
        import ipywidgets

        self.report = report
        self.ipu = ipywidgets.Dropdown(
            options=[(f"IPU {i}", i) for i in range(report.execution.numIPUs)], value=0, description="IPU"
        )
        self.supersteps = ipywidgets.IntSlider(
            value=max_supersteps, min=1, max=max(400, max_supersteps), description="supersteps", continuous_update=False
        )
        super().__init__([self.ipu, self.supersteps])

    def draw(self, figure) -> str:
        return draw_execution_trace(figure, self.report, self.ipu.value, self.supersteps.value)
