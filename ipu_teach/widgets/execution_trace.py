"""The execution-trace view: the BSP steps of one execution along simulated time, per IPU, split into
compute / sync / exchange, the cycles per step, and how evenly the tiles were busy (PopVision's
Execution Trace). ``plot_execution_trace`` draws the same figure without widgets.

The trace names its steps as PopVision's layered view does: one row per layer (a step name's first part,
``conv2d_1`` of ``conv2d_1/Conv2D:3/grad``), and the rest of the name written on the step's bar where it fits.
"""

from __future__ import annotations

import numpy as np

from ..bsp.figures import COLOURS
from ..bsp.timeline import PHASE_ORDER
from ..schedules.figure import counted
from .figure_widget import FigureWidget, plot_text

DEFAULT_SUPERSTEPS = 60
TOP_STEPS = 12
MOST_LAYER_ROWS = 8  # the trace's rows stay tall enough to read; later layers share the last row
BAR_HEIGHT = 0.8
NAME_MARGIN_POINTS = 3  # a name is written on a step's bar only with this much room on each side


def layer_of(step_name: str) -> str:
    """The layer a program step belongs to: the first part of its name (``dense`` of ``dense/MatMul:0``)."""
    return step_name.split("/", 1)[0]


def trace_rows(names: list) -> tuple:
    """``(row titles, row of each step)`` for step names in execution order: a row per layer in the order
    layers first run, at most ``MOST_LAYER_ROWS``; the layers after those share the last row.

    >>> trace_rows(["infeed", "dense/MatMul:0", "loss/Mean:1", "dense/MatMul:0/grad", "outfeed"])
    (['infeed', 'dense', 'loss', 'outfeed'], [0, 1, 2, 1, 3])
    """
    layers = list(dict.fromkeys(layer_of(name) for name in names))
    if len(layers) > MOST_LAYER_ROWS:
        shared = len(layers) - MOST_LAYER_ROWS + 1
        layers = layers[: MOST_LAYER_ROWS - 1] + [f"{shared} more layers"]
    row = {layer: index for index, layer in enumerate(layers)}
    last = len(layers) - 1
    return layers, [row.get(layer_of(name), last) for name in names]


def _draw_trace(trace, timeline, ipu: int, max_supersteps: int) -> tuple:
    """The phases of the first supersteps along simulated time, each on its layer's row; returns
    ``(last cycle drawn, steps drawn, [(name, start, end, row)] of each step, the rows as text)``."""
    names = [timeline.labels[r] for r in timeline.first_supersteps(max_supersteps)]
    titles, rows = trace_rows(names)
    rows = np.asarray(rows)
    intervals = timeline.phase_intervals(ipu, max_supersteps)
    for category in PHASE_ORDER:
        starts, widths = intervals[category]
        for row in range(len(titles)):
            keep = (rows == row) & (widths > 0)
            if not keep.any():
                continue
            trace.broken_barh(
                list(zip(starts[keep], widths[keep])),
                (row - BAR_HEIGHT / 2, BAR_HEIGHT),
                color=COLOURS[category],
            )
    first, last = intervals[PHASE_ORDER[0]], intervals[PHASE_ORDER[-1]]
    begins, ends = first[0], last[0] + last[1]
    trace.set_yticks(range(len(titles)), [plot_text(title) for title in titles], fontsize="small")
    trace.set_ylim(len(titles) - 0.5, -0.5)  # the first layer on top
    steps = [
        (name.split("/", 1)[1], float(b), float(e), int(row))
        for name, b, e, row in zip(names, begins, ends, rows)
        if "/" in name  # a step that is its whole layer is named by its row
    ]
    per_row = np.bincount(rows, minlength=len(titles))
    rows_text = ", ".join(f"{title} ({counted(int(n), 'step')})" for title, n in zip(titles, per_row))
    return max(1, int(ends.max(initial=0))), len(names), steps, rows_text


def _name_the_steps(trace, steps) -> None:
    """Writes each step's name (after its layer) on its bar; a name shows only where it fits (decided when
    drawn, once the layout is known, so the figure is laid out once)."""
    from matplotlib.text import Text

    class NameOnBar(Text):
        def draw(self, renderer):
            (x0, _), (x1, _) = self.axes.transData.transform([(self.begin, 0), (self.end, 0)])
            self.set_visible(True)  # measured as shown: a hidden text has no extent
            room = x1 - x0 - 2 * renderer.points_to_pixels(NAME_MARGIN_POINTS)
            self.set_visible(self.get_window_extent(renderer).width <= room)
            super().draw(renderer)

    for name, begin, end, row in steps:
        text = NameOnBar(
            (begin + end) / 2, row, plot_text(name), ha="center", va="center", fontsize="x-small", color="white"
        )
        text.begin, text.end = begin, end
        text.set_in_layout(False)
        trace.add_artist(text)


def draw_execution_trace(figure, report, ipu: int = 0, max_supersteps: int = DEFAULT_SUPERSTEPS) -> str:
    """Draw on ``figure``: phases over time (top), cycles per step (bottom left), busy cycles per tile
    (bottom right), all for ``ipu``. Returns a caption: the cycles per phase, then the trace's rows."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

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
    end, drawn, named, rows_text = _draw_trace(trace, timeline, ipu, max_supersteps)
    total = timeline.supersteps
    trace.set(
        xlim=(0, end),
        xlabel=f"simulated cycles (first {drawn:,}{f' of {total:,}' if drawn < total else ''} supersteps)",
        title=plot_text(f"Execution trace of IPU {ipu} ({execution.ipuName}, simulated)"),
    )
    trace.legend(  # beside the bars
        handles=[Patch(color=COLOURS[c], label=c) for c in PHASE_ORDER],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize="x-small",
        frameon=False,
    )

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
    steps.set(xlabel="cycles over the execution")
    steps.set_title(f"the {len(order)} costliest steps", fontsize="medium")
    steps.xaxis.set_major_locator(MaxNLocator(4))  # six-digit cycle counts side by side would touch

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
    tiles.set(xlabel="tile", ylabel="busy cycles")
    tiles.set_title(
        f"tile balance {execution.tile_balance(ipu):.1%}, utilisation {execution.utilisation():.1%}",
        fontsize="medium",
    )
    figure.set_layout_engine("constrained")
    _name_the_steps(trace, named)
    totals = {c: int(per_run[c].sum()) for c in PHASE_ORDER}
    phases = ", ".join(f"{c} {v:,}" for c, v in totals.items())
    return (
        f"IPU {ipu}: {sum(totals.values()):,} cycles per execution (simulated): {phases}\n"
        f"the trace's rows, layers in the order they first run: {rows_text}"
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

    figure_size = (8.4, 5.4)  # 806 pixels wide on the page

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
