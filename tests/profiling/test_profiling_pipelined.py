"""A pipelined model's report holds one IPU per stage, each with its own tiles, variables and liveness."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
from profiling_helpers import TILES, configure, fit, pipelined_cnn

from ipu_teach import profiling
from ipu_teach.hardware import CODE_CATEGORIES
from ipu_teach.widgets import TileMemoryExplorer


def _fit_pipelined(tmp_path):
    configure(replicas=2)

    def model_fn():
        model = pipelined_cnn()
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        return model

    with profiling.auto_report(tmp_path):
        model = fit(model_fn, batch_size=4, samples=32, steps_per_execution=4)
    return model, profiling.open_report(profiling.last_report_path())


def test_each_stage_is_an_ipu_of_the_report(tmp_path):
    model, report = _fit_pipelined(tmp_path)
    stage_graphs = model.get_ipu_executable("train").pipeline.stage_graphs
    compilation = report.compilation
    assert compilation.target.numIPUs == len(stage_graphs) == 2
    assert compilation.target.numTiles == 2 * TILES
    for ipu, graph in enumerate(stage_graphs):
        np.testing.assert_array_equal(compilation.tile_memory(ipu), graph.tile_memory())
        assert compilation.tiles[ipu * TILES].ipu == ipu
        names = {v.name for v in compilation.variables if v.ipu == ipu and v.category == "variables"}
        assert names == {m.name for m in graph.memory if m.category == "variables"}
        assert compilation.live_peak(ipu).totalBytes <= compilation.tile_memory(ipu).sum()
    conv_ipu = {v.ipu for v in compilation.variables if v.name.startswith("conv2d")}
    dense_ipu = {v.ipu for v in compilation.variables if v.name.startswith("dense")}
    assert conv_ipu == {0} and dense_ipu == {1}


def test_the_explorer_switches_ipu(tmp_path):
    _, report = _fit_pipelined(tmp_path)
    explorer = TileMemoryExplorer(report)
    explorer.tile.value = 0
    ipu0 = explorer.caption.value
    explorer.ipu.value = 1
    tile = report.compilation.tiles[TILES]
    assert explorer.caption.value.startswith("IPU 1") and explorer.caption.value != ipu0
    drawn = np.round([bar.get_width() * 1024 for bar in explorer.figure.axes[1].patches]).astype(int).tolist()
    roles = [v for c, v in tile.memory.byCategory.items() if c not in CODE_CATEGORIES]
    assert drawn == list(tile.memory.byPopVisionCategory.values()) + roles
