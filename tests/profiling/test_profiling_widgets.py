"""The tile-memory explorer and the execution-trace view: the drawn data follows the controls."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from profiling_helpers import TILES, configure, fit, wide_mlp

from ipu_teach import profiling
from ipu_teach.hardware import CODE_CATEGORIES
from ipu_teach.widgets import ExecutionTraceView, TileMemoryExplorer, plot_execution_trace, plot_tile_memory

KIB = 1024


def _details(tile):
    """What the tile-details panel should list: PopVision's categories, then the tensors' roles."""
    roles = [v for c, v in tile.memory.byCategory.items() if c not in CODE_CATEGORIES]
    return list(tile.memory.byPopVisionCategory.values()) + roles


def _detail_bytes(figure):
    """The tile-details axes' bar lengths, in bytes."""
    return np.round([bar.get_width() * KIB for bar in figure.axes[1].patches]).astype(int).tolist()


def _liveness(figure):
    return np.asarray(figure.axes[2].lines[0].get_ydata())


def _trace_segments(figure):
    return sum(len(collection.get_paths()) for collection in figure.axes[0].collections)


def test_plot_tile_memory_draws_every_tile_the_limit_the_fullest_tile_and_the_peak(trained):
    _, report = trained
    figure = plot_tile_memory(report)
    compilation = report.compilation
    fullest = int(np.argmax(compilation.tile_memory(0)))
    assert _detail_bytes(figure) == _details(compilation.tiles[fullest])
    every = figure.axes[0]
    present = [c for c, per_tile in compilation.memory_by_popvision_category.items() if per_tile[0].any()]
    assert present[:2] == ["always-live variables", "not-always-live variables"]
    assert len(every.collections) == len(present)
    assert [text.get_text() for text in every.get_legend().get_texts()] == present
    # about 3% of each tile is used: the axis follows the data and the limit is named above it
    fullest_kib = compilation.tile_memory(0).max() / KIB
    assert every.get_ylim()[1] == pytest.approx(1.25 * fullest_kib)
    (limit,) = [text for text in every.texts if text.get_gid() == "sram-per-tile"]
    assert f"SRAM per tile: {compilation.target.bytesPerTile / KIB:,.0f} KiB, off this scale" in limit.get_text()
    peak = compilation.live_peak(0)
    marker = figure.axes[2].lines[-1]
    assert (marker.get_xdata()[0], marker.get_ydata()[0]) == (peak.index, peak.totalBytes / KIB / KIB)


def test_plot_tile_memory_refuses_a_tile_that_does_not_exist(trained):
    _, report = trained
    with pytest.raises(ValueError, match=f"tile {TILES} does not exist"):
        plot_tile_memory(report, tile=TILES)


def test_tile_memory_explorer_follows_its_controls(trained):
    _, report = trained
    explorer = TileMemoryExplorer(report)
    assert explorer.ipu.options == (("IPU 0", 0),)
    first_png, first_live = explorer.image.value, _liveness(explorer.figure)
    other = (explorer.tile.value + 7) % TILES
    explorer.tile.value = other
    assert _detail_bytes(explorer.figure) == _details(report.compilation.tiles[other])
    assert f"tile {other}" in explorer.caption.value and explorer.image.value != first_png
    explorer.liveness_of.value = "selected tile"
    expected = [s.totalBytes / KIB for s in report.compilation.liveness(0, other)]
    np.testing.assert_allclose(_liveness(explorer.figure), expected)
    assert not np.allclose(_liveness(explorer.figure), first_live)


def test_execution_trace_view_follows_its_controls(tmp_path):
    configure(replicas=2)
    with profiling.auto_report(tmp_path):
        fit(batch_size=4)
    report = profiling.open_report(profiling.last_report_path())
    view = ExecutionTraceView(report, max_supersteps=5)
    assert [value for _, value in view.ipu.options] == [0, 1]
    few = _trace_segments(view.figure)
    view.supersteps.value = 40
    assert _trace_segments(view.figure) > few
    first = view.caption.value
    view.ipu.value = 1
    assert view.caption.value.startswith("IPU 1") and first.startswith("IPU 0")
    figure = plot_execution_trace(report, ipu=1, max_supersteps=40)
    assert _trace_segments(figure) == _trace_segments(view.figure)
    busy = figure.axes[2].collections[0]
    assert busy.get_paths()  # the busy cycles per tile are drawn


def test_the_execution_trace_spans_the_figure_beside_its_legend(trained):
    _, report = trained
    figure = plot_execution_trace(report)
    figure.canvas.draw()
    trace, steps, _ = figure.axes
    # the long step names widen the bottom-left panel's margin, not the trace's (it has only layer names)
    assert trace.get_position().x0 < 0.15 < steps.get_position().x0
    legend = trace.get_legend().get_window_extent()
    assert legend.x0 >= trace.get_window_extent().x1 and legend.x1 <= figure.bbox.x1  # beside the bars, not clipped


def test_tile_memory_explorer_opens_an_out_of_memory_report_by_its_path(tmp_path, monkeypatch):
    import json

    from ipu_teach import ipu

    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps({"debug.allowOutOfMemory": "true"}))
    configure()
    with profiling.auto_report(tmp_path), pytest.raises(ipu.ModelOutOfMemoryError):
        fit(wide_mlp, batch_size=2048, samples=2048, steps_per_execution=1)
    path = profiling.last_report_path()
    explorer = TileMemoryExplorer(path)
    compilation = explorer.report.compilation
    over = int((compilation.tile_memory(0) > compilation.target.bytesPerTile).sum())
    assert over > 0 and f"{over} of {TILES} tiles over their SRAM" in explorer.caption.value
    every = explorer.figure.axes[0]
    (limit,) = [line for line in every.lines if line.get_gid() == "sram-per-tile"]  # on scale: a dashed line
    assert limit.get_ydata()[0] == compilation.target.bytesPerTile / KIB
    assert every.get_ylim()[1] >= compilation.tile_memory(0).max() / KIB


def test_tile_memory_explorer_says_what_to_pass_for_an_out_of_memory_error():
    with pytest.raises(TypeError, match="An out-of-memory error holds no report.*debug.allowOutOfMemory"):
        TileMemoryExplorer(MemoryError("Out of memory"))


def test_a_single_ipu_hides_the_ipu_choice_and_the_widget_offers_its_figure_as_a_picture(trained):
    import base64

    _, report = trained
    explorer = TileMemoryExplorer(report)
    assert explorer.ipu.layout.display == "none" and explorer.tile.layout.display is None
    bundle, metadata = explorer._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]) == explorer.image.value
    # shown as wide as the widget's figure (the PNG has twice the pixels, for sharp high-density screens)
    assert metadata == {"image/png": {"width": explorer.display_width()}} and explorer.display_width() == 806
    assert bundle["text/plain"] == "TileMemoryExplorer: run this cell to use its controls"
    assert "application/vnd.jupyter.widget-view+json" in bundle
