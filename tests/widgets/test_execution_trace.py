"""The execution trace names its steps: a row per layer, and the rest of each name on the bar where it fits."""

import matplotlib

matplotlib.use("Agg")

import numpy as np

from ipu_teach.widgets import plot_execution_trace
from ipu_teach.widgets.execution_trace import MOST_LAYER_ROWS, layer_of, trace_rows

SUPERSTEPS = 20


def drawn_steps(report):
    timeline = report.execution.timeline()
    return [timeline.labels[r] for r in timeline.first_supersteps(SUPERSTEPS)], timeline


def test_each_step_is_drawn_on_the_row_of_its_layer(report):
    figure = plot_execution_trace(report, max_supersteps=SUPERSTEPS)
    trace = figure.axes[0]
    names, timeline = drawn_steps(report)
    layers = list(dict.fromkeys(layer_of(name) for name in names))
    assert (
        [label.get_text() for label in trace.get_yticklabels()]
        == layers
        == ["infeed", "dense", "dense_1", "loss", "metrics"]
    )
    intervals = timeline.phase_intervals(0, SUPERSTEPS)
    for row, layer in enumerate(layers):
        on_row = [c for c in trace.collections if np.isclose(c.get_paths()[0].get_extents().y0, row - 0.4)]
        ours = [i for i, name in enumerate(names) if layer_of(name) == layer]
        expected = sum(int(intervals[phase][1][i] > 0) for phase in intervals for i in ours)
        assert sum(len(c.get_paths()) for c in on_row) == expected, layer


def test_a_steps_name_is_written_on_its_bar_only_where_it_fits(report):
    figure = plot_execution_trace(report, max_supersteps=SUPERSTEPS)
    figure.canvas.draw()
    trace = figure.axes[0]
    names, timeline = drawn_steps(report)
    names_on_bars = trace.texts
    shown = [text for text in names_on_bars if text.get_visible()]
    written = [text.get_text() for text in shown]
    assert "MatMul:0" in written  # the longest compute step of the first layer
    assert "MatMul:0/transform" not in written and "dense/MatMul:0/transform" in names  # a short bar keeps quiet
    intervals = timeline.phase_intervals(0, SUPERSTEPS)
    begins, ends = intervals["sync"][0], intervals["compute"][0] + intervals["compute"][1]
    assert len(shown) < len(names_on_bars)
    for text in shown:
        index = [n.split("/", 1)[-1] for n in names].index(text.get_text())
        (left, _), (right, _) = trace.transData.transform([(begins[index], 0), (ends[index], 0)])
        box = text.get_window_extent()
        assert left <= box.x0 and box.x1 <= right, f"{text.get_text()!r} leaves its bar"


def test_layers_beyond_the_rows_share_the_last_row():
    names = [f"layer{i}/op" for i in range(MOST_LAYER_ROWS + 3)]
    titles, rows = trace_rows(names)
    assert titles[:-1] == [f"layer{i}" for i in range(MOST_LAYER_ROWS - 1)] and titles[-1] == "4 more layers"
    assert rows == list(range(MOST_LAYER_ROWS - 1)) + [MOST_LAYER_ROWS - 1] * 4


def test_the_caption_names_the_rows_with_their_steps(report):
    from ipu_teach.widgets import ExecutionTraceView

    view = ExecutionTraceView(report, max_supersteps=SUPERSTEPS)
    names, _ = drawn_steps(report)
    counts = {layer: sum(layer_of(n) == layer for n in names) for layer in dict.fromkeys(map(layer_of, names))}
    assert counts["infeed"] == 1 and counts["dense"] > 1
    expected = ", ".join(f"{layer} ({n} step{'s' if n > 1 else ''})" for layer, n in counts.items())
    assert view.caption.value.endswith("<br>the trace&#x27;s rows, layers in the order they first run: " + expected)
