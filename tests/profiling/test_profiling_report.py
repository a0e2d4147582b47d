"""The report's figures are derived from the executable and add up (the issue's 'Done when')."""

import numpy as np
from profiling_helpers import TILES

from ipu_teach import profiling
from ipu_teach.profiling.report import CODE_CATEGORIES


def test_target_names_the_simulated_ipu(trained):
    _, report = trained
    target = report.compilation.target
    assert (target.numIPUs, target.numTiles, target.tilesPerIPU, target.numReplicas) == (1, TILES, TILES, 1)
    assert target.bytesPerTile == 624 * 1024
    assert len(report.compilation.tiles) == TILES


def test_popvision_categories_add_up_to_each_tile_total_allocated_by_the_engine(trained):
    model, report = trained
    engine_totals = model.get_ipu_executable("train").graph.tile_memory()
    for tile in report.compilation.tiles:
        memory = tile.memory
        assert sum(memory.byPopVisionCategory.values()) == memory.total.includingGaps == engine_totals[tile.number]
        assert memory.alwaysLiveBytes + memory.notAlwaysLiveBytes == memory.total.excludingGaps
        assert memory.byPopVisionCategory["not-always-live variables"] == memory.notAlwaysLiveBytes
        assert sum(memory.byCategory.values()) >= memory.total.includingGaps  # roles count shared memory twice
    np.testing.assert_array_equal(report.compilation.tileTotals[0], engine_totals)


def test_totals_are_the_mapped_tensors_plus_code(trained):
    model, report = trained
    by_category = {c: int(s.sum()) for c, s in report.compilation.memory_by_category.items()}
    weights = sum(w.size * w.dtype.itemsize for w in model.weights)
    assert by_category["variables"] == weights
    tensors = sum(v for c, v in by_category.items() if c not in CODE_CATEGORIES)
    code = sum(v for c, v in by_category.items() if c in CODE_CATEGORIES)
    assert code > 0 and by_category["activations"] > 0
    assert tensors + code >= int(report.compilation.tile_memory(0).sum())
    by_popvision = report.compilation.memory_by_popvision_category
    assert {c: int(by_popvision[c].sum()) for c in CODE_CATEGORIES} == {c: by_category[c] for c in CODE_CATEGORIES}
    assert int(by_popvision["always-live variables"].sum()) == weights


def test_live_peak_is_at_most_the_total_and_at_least_the_always_live(trained):
    _, report = trained
    compilation = report.compilation
    total = int(compilation.tile_memory(0).sum())
    steps = compilation.liveness(0)
    assert len(steps) == len(compilation.programSteps[0]) > 0
    peak = compilation.live_peak(0)
    assert peak.totalBytes == max(s.totalBytes for s in steps) <= total
    assert peak.totalBytes > peak.alwaysLiveBytes == int(compilation.always_live_memory.sum())
    live = peak.notAlwaysLiveVariables
    assert all(name.endswith(("/output", "/output/grad", "/temporaries")) for name in live)
    for tile in (0, TILES - 1):
        assert compilation.live_peak(0, tile).totalBytes <= compilation.tiles[tile].memory.total.includingGaps
    per_tile = [[s.totalBytes for s in compilation.liveness(0, t)] for t in range(TILES)]
    assert np.sum(per_tile, axis=0).tolist() == [s.totalBytes for s in steps]


def test_execution_steps_follow_the_engine_timeline(trained):
    model, report = trained
    executable = model.get_ipu_executable("train")
    timeline = executable.timeline
    execution = report.execution
    assert execution.total_cycles() == timeline.total_cycles()
    assert [s.name for s in execution.steps] == list(timeline.labels)
    for r, step in enumerate(execution.steps):
        assert step.ipus[0].cycles == timeline.compute[r, 0] + timeline.sync[r, 0] + timeline.exchange[r, 0]
        assert 0.0 <= step.ipus[0].tileBalance <= 1.0
    graph_flops = sum(s.flops for s in executable.graph.steps if s.phase != "update")
    per_step_flops = sum(
        s.flops * s.count
        for s in execution.steps
        if s.name in {g.name for g in executable.graph.forward + executable.graph.backward}
    )
    assert per_step_flops == graph_flops * 2  # steps_per_execution=2
    assert np.isclose(execution.utilisation(), timeline.utilisation())
    infeed = next(s for s in execution.steps if s.kind == "host->device")
    assert infeed.bytesExchanged == executable.graph.input_bytes


def test_cycles_by_kind_add_up_to_the_execution_and_name_the_host_streams(trained):
    _, report = trained
    execution = report.execution
    by_kind = execution.cycles_by_kind()
    assert sum(by_kind.values()) == execution.total_cycles()
    assert {"compute", "host->device", "device->host"} <= set(by_kind)
    assert list(by_kind.values()) == sorted(by_kind.values(), reverse=True)
    infeed = sum(s.count * s.ipus[0].cycles for s in execution.steps if s.kind == "host->device")
    assert by_kind["host->device"] == infeed


def test_program_visitor_walks_the_tree_like_libpva(trained):
    _, report = trained

    class CountSteps(profiling.ProgramVisitor):
        def __init__(self):
            self.on_tile, self.streams, self.repeats = [], 0, []

        def visitOnTileExecute(self, program):
            self.on_tile.append(program.name)

        def visitStreamCopy(self, program):
            self.streams += 1

        def visitRepeat(self, program):
            self.repeats.append(program.count)
            self.visitProgram(program)

    visitor = CountSteps()
    report.compilation.program.accept(visitor)
    compute_rows = [s.name for s in report.execution.steps if s.kind == "compute"]
    assert visitor.on_tile == compute_rows
    assert visitor.streams == 2  # infeed and outfeed of the step body
    assert 2 in visitor.repeats  # steps_per_execution


def test_out_of_range_tiles_and_ipus_are_named(trained):
    _, report = trained
    import pytest

    with pytest.raises(IndexError, match=f"tile {TILES} does not exist"):
        report.compilation.tile(TILES)
    with pytest.raises(IndexError, match="IPU 1 does not exist"):
        report.compilation.liveness(1)
