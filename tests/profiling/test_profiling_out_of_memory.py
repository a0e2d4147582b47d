"""Out of memory: the error names the tile, the bytes and the cures; debug.allowOutOfMemory profiles it."""

import json

import numpy as np
import pytest
from profiling_helpers import TILES, configure, fit, wide_mlp

from ipu_teach import ipu, profiling

HUGE_BATCH = 2048


def test_the_error_names_the_worst_tile_the_bytes_the_contents_and_the_cures():
    configure()
    with pytest.raises(ipu.ModelOutOfMemoryError) as caught:
        fit(wide_mlp, batch_size=HUGE_BATCH, samples=HUGE_BATCH, steps_per_execution=1)
    error = caught.value
    totals = error.graph.tile_memory()
    assert error.tile == int(np.argmax(totals)) and error.needed == totals[error.tile]
    assert error.available == 624 * 1024 < error.needed
    assert error.categories[0][0] == "activations"
    message = str(error)
    for needed in (
        f"tile {error.tile}",
        f"{error.needed:,} bytes",
        f"{error.available:,} bytes",
        "activations",
        "smaller micro-batch",
        "pipelining",
        "recompute",
        "available_memory_proportion",
    ):
        assert needed in message


@pytest.mark.parametrize("cure", ["smaller micro-batch", "more tiles"])
def test_the_usual_cures_fit(cure):
    configure(tiles=TILES * 8 if cure == "more tiles" else TILES)
    batch = HUGE_BATCH // 8 if cure == "smaller micro-batch" else HUGE_BATCH
    model = fit(wide_mlp, batch_size=batch, samples=HUGE_BATCH, steps_per_execution=1)
    graph = model.get_ipu_executable("train").graph
    assert graph.tile_memory().max() <= graph.spec.sram_per_tile


def test_allow_out_of_memory_compiles_writes_the_overflow_and_refuses_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv(
        "POPLAR_ENGINE_OPTIONS",
        json.dumps({"autoReport.all": "true", "debug.allowOutOfMemory": "true", "autoReport.directory": str(tmp_path)}),
    )
    configure()
    with pytest.raises(ipu.ModelOutOfMemoryError, match="compiled with debug.allowOutOfMemory .* cannot run"):
        fit(wide_mlp, batch_size=HUGE_BATCH, samples=HUGE_BATCH, steps_per_execution=1)
    report = profiling.open_report(profiling.last_report_path())
    assert report.path.startswith(str(tmp_path))
    over = report.compilation.out_of_memory_tiles(0)
    assert len(over) > 0
    assert all(report.compilation.tiles[t].memory.overflow > 0 for t in over)
    assert report.options["debug.allowOutOfMemory"] is True
    assert "tile(s) out of memory" in profiling.profile_summary(report)


def test_a_compile_only_connection_profiles_an_overflowing_program_without_refusing(tmp_path):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = TILES
    config.device_connection.type = ipu.DeviceConnectionType.PRE_COMPILE
    config.profiling.allow_out_of_memory = True
    config.configure_ipu_system()
    with profiling.auto_report(tmp_path):
        fit(wide_mlp, batch_size=HUGE_BATCH, samples=HUGE_BATCH, steps_per_execution=1)
    report = profiling.open_report(profiling.last_report_path())
    assert len(report.compilation.out_of_memory_tiles(0)) > 0
