"""Every explorer's figure stays readable as shown on the page (``display_width`` CSS pixels, the width the
browser test checks it keeps at a 1024-pixel window): no text smaller than ``MIN_TEXT_PX``, none cut by the
figure's edge, no two texts overlapping. Checked on what matplotlib really draws (tick labels outside the
axes' limits are not drawn), in the settings a learner reaches: the notebooks' own, the sliders at their
ends, every schedule and every liveness scope."""

import matplotlib

matplotlib.use("Agg")

from unittest import mock

import numpy as np
import pytest
from matplotlib.text import Text

from ipu_teach.widgets import ExecutionTraceView, TileMemoryExplorer
from ipu_teach.widgets.figure_widget import MIN_TEXT_PX
from ipu_teach.widgets.pipeline import SCHEDULES, PipelineExplorer

pytest.importorskip("ipywidgets")
TOUCHING_PX = 1  # boxes that share an edge do not overlap


def drawn_texts(figure):
    """``[(text, its box in figure pixels)]`` of every non-empty text matplotlib draws."""
    drawn, draw = [], Text.draw

    def record(self, renderer):
        draw(self, renderer)
        if self.get_visible() and self.get_text().strip():
            drawn.append((self, self.get_window_extent(renderer)))

    with mock.patch.object(Text, "draw", record):
        figure.draw_without_rendering()
    return drawn


def unreadable(widget) -> list:
    """What a learner could not read in the widget's figure, shown ``display_width`` CSS pixels wide."""
    figure, problems = widget.figure, []
    css_px_per_point = widget.display_width() / figure.get_figwidth() / 72
    texts = drawn_texts(figure)
    edge = figure.bbox
    for text, box in texts:
        size = text.get_fontsize() * css_px_per_point
        if size < MIN_TEXT_PX - 1e-9:
            problems.append(f"{text.get_text()!r} is {size:.1f} px high")
        if box.x0 < edge.x0 - TOUCHING_PX or box.x1 > edge.x1 + TOUCHING_PX or box.y0 < edge.y0 - TOUCHING_PX:
            problems.append(f"{text.get_text()!r} is cut by the figure's edge")
        if box.y1 > edge.y1 + TOUCHING_PX:
            problems.append(f"{text.get_text()!r} is cut by the figure's edge")
    corners = np.array([[b.x0, b.y0, b.x1, b.y1] for _, b in texts])
    for i in range(len(texts)):
        later = corners[i + 1 :]
        apart_x = np.minimum(corners[i, 2], later[:, 2]) - np.maximum(corners[i, 0], later[:, 0]) <= TOUCHING_PX
        apart_y = np.minimum(corners[i, 3], later[:, 3]) - np.maximum(corners[i, 1], later[:, 1]) <= TOUCHING_PX
        for j in np.flatnonzero(~(apart_x | apart_y)):
            problems.append(f"{texts[i][0].get_text()!r} overlaps {texts[i + 1 + j][0].get_text()!r}")
    return problems


def test_the_checker_finds_small_cut_and_overlapping_text():
    explorer = PipelineExplorer(stages=2, accumulation=4)
    assert unreadable(explorer) == []
    ax = explorer.figure.axes[0]
    ax.text(0.5, 0.5, "tiny", fontsize=5, transform=ax.transAxes)
    ax.text(0.2, 0.2, "first", transform=ax.transAxes)
    ax.text(0.2, 0.2, "second", transform=ax.transAxes)
    explorer.figure.text(0.99, 0.5, "past the edge")
    problems = unreadable(explorer)
    assert any(p.startswith("'tiny' is") for p in problems)
    assert "'first' overlaps 'second'" in problems and "'past the edge' is cut by the figure's edge" in problems


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_the_pipeline_explorer_is_readable_at_every_setting(schedule):
    explorer = PipelineExplorer(schedule=schedule, stages=4, accumulation=16)  # notebook 04's explorer
    assert unreadable(explorer) == [], f"{schedule}, 4 stages"
    explorer.stages.value, explorer.ratio.value = explorer.stages.max, explorer.ratio.max
    explorer.accumulation.value = explorer.accumulation.max
    assert unreadable(explorer) == [], f"{schedule}, everything at its maximum"
    explorer.stages.value, explorer.accumulation.value = 1, 1
    explorer.recompute.value = True
    assert unreadable(explorer) == [], f"{schedule}, one stage, one micro-batch"


def test_the_tile_memory_explorer_is_readable_at_every_setting(reports):
    for report in reports:
        explorer = TileMemoryExplorer(report)
        tiles = report.compilation.target.tilesPerIPU
        for tile in (0, tiles - 1):
            for scope in explorer.liveness_of.options:
                explorer.tile.value, explorer.liveness_of.value = tile, scope
                assert unreadable(explorer) == [], f"{tiles} tiles, tile {tile}, liveness of the {scope}"


def test_the_execution_trace_is_readable_at_every_setting(reports):
    for report in reports:
        view = ExecutionTraceView(report)
        for supersteps in (1, 20, view.supersteps.max):
            view.supersteps.value = supersteps
            assert unreadable(view) == [], f"{report.compilation.target.tilesPerIPU} tiles, {supersteps} supersteps"


def test_the_figure_keeps_its_size_and_scrolls_on_its_own_in_a_narrow_column():
    from ipu_teach.widgets.figure_widget import FIGURE_CLASS

    explorer = PipelineExplorer(stages=8, accumulation=64)
    row, caption, box = explorer.widget.children
    assert box.children == (explorer.image,) and FIGURE_CLASS in box._dom_classes and caption is explorer.caption
    assert box.layout.overflow == "auto hidden" and box.layout.max_width == "100%"  # the box fits, the figure scrolls
    assert explorer.image.layout.flex == "0 0 auto" and explorer.image.layout.max_width == "none"  # never shrunk
    assert explorer.image.layout.width == f"{explorer.display_width()}px"
    assert explorer.display_width() <= 844  # JupyterLab's output column at a 1024-pixel window, file browser closed
    assert row.layout.flex_flow == "row wrap"
