"""A batch too big for the tiles' SRAM is a ModelOutOfMemoryError that names the tile, the bytes and
the cures; allow_out_of_memory compiles it anyway (as debug.allowOutOfMemory does)."""

import pytest
from helpers.models import compile_model
from ipu_test_helpers import build, configure, data, ipu_model

from ipu_teach import bsp, ipu

TILES = 4  # a small IPU, so that a modest batch overflows it
HIDDEN = 512
HUGE_BATCH = 1024  # activations of 1024 x 512 float32 = 2 MiB, over 4 tiles of 624 KiB


def fit_huge(model):
    x, y = data(HUGE_BATCH)
    model.fit(x, y, batch_size=HUGE_BATCH, verbose=0)


def test_a_huge_batch_raises_out_of_memory_naming_tile_bytes_categories_variables_and_cures():
    configure(1, tiles_per_ipu=TILES)
    model = ipu_model(steps_per_execution=1, hidden=HIDDEN)
    with pytest.raises(ipu.ModelOutOfMemoryError) as caught:
        fit_huge(model)
    error = caught.value
    assert isinstance(error, bsp.TileOutOfMemoryError)
    sram = ipu.system.current().spec.sram_per_tile
    assert error.available == sram and error.needed > sram
    assert 0 <= error.tile < TILES
    message = str(error)
    assert f"needs {error.needed:,} bytes on tile {error.tile}" in message
    assert f"has {sram:,} bytes of SRAM (over by {error.needed - sram:,})" in message
    assert error.categories[0][0] == "activations"  # the batch is what fills the tile
    for name, nbytes in error.categories + error.variables:
        assert f"{nbytes:,} B" in message and name in message
    assert [n for _, n in error.categories] == sorted((n for _, n in error.categories), reverse=True)
    for cure in ("smaller micro-batch", "pipelining", "recompute"):
        assert cure in message
    # recomputation needs no pipeline (issue 24): the cure names the checkpoint a model without one can add
    assert "ipu.pipelining_ops.recomputation_checkpoint" in message and callable(
        ipu.pipelining_ops.recomputation_checkpoint
    )


def test_a_smaller_batch_of_the_same_model_fits():
    configure(1, tiles_per_ipu=TILES)
    model = ipu_model(steps_per_execution=1, hidden=HIDDEN)
    x, y = data(64)
    history = model.fit(x, y, batch_size=64, verbose=0)
    assert len(history.history["loss"]) == 1


def configure_small_ipu_allowing_out_of_memory():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = TILES
    config.profiling.allow_out_of_memory = True
    config.configure_ipu_system()


@pytest.mark.parametrize("how", ["IPUConfig", "POPLAR_ENGINE_OPTIONS"])
def test_allow_out_of_memory_compiles_the_huge_batch_for_its_report_but_cannot_run_it(how, monkeypatch):
    if how == "IPUConfig":
        configure_small_ipu_allowing_out_of_memory()
    else:
        monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", '{"debug.allowOutOfMemory": "true"}')
        configure(1, tiles_per_ipu=TILES)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = compile_model(build(hidden=HIDDEN))
    weights = model.get_weights()
    with pytest.raises(
        ipu.out_of_memory.CannotRunOutOfMemoryError,
        match="compiled with debug.allowOutOfMemory.*cannot run.*smaller micro-batch",
    ):
        fit_huge(model)
    executable = model.get_ipu_executable("train")
    assert executable.graph.micro_batch == HUGE_BATCH and executable.compile_seconds > 0
    assert executable.graph.tile_memory().max() > executable.graph.spec.sram_per_tile
    assert isinstance(executable.out_of_memory, ipu.ModelOutOfMemoryError)
    for before, after in zip(weights, model.get_weights()):  # nothing ran
        assert (before == after).all()
