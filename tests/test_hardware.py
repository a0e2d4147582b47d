"""The hardware specs: figures consistent with the slides, sources attached, variants by replace."""

import dataclasses

import pytest

from ipu_teach import hardware
from ipu_teach.hardware import BOW, MK2, TEACHING_IPU, IPUSpec


def test_mk2_totals_match_the_slides():
    assert MK2.total_threads == 8832
    assert 897 * 2**20 <= MK2.total_sram < 900 * 2**20 + 2**20  # "900MB per IPU"
    assert MK2.peak_flops("float16", "half") == pytest.approx(250e12, rel=0.01)  # Graphcore's fp16.16 figure
    assert MK2.peak_flops("float32") == pytest.approx(62.5e12, rel=0.01)
    assert MK2.exchange_bytes_per_s == pytest.approx(8e12, rel=0.03)
    assert BOW.peak_flops("float16", "half") == pytest.approx(350e12, rel=0.01)
    assert BOW.exchange_bytes_per_s == pytest.approx(11e12, rel=0.02)


@pytest.mark.parametrize("spec", [MK2, BOW, TEACHING_IPU])
def test_every_figure_has_a_source(spec):
    table = hardware.sources(spec)
    names = {f.name for f in dataclasses.fields(IPUSpec)} - {"source_notes"}
    assert set(table) == names
    assert all(isinstance(source, str) and source for _, source in table.values())
    assert "approximate" in table["sync_cycles_on_chip"][1]
    assert "approximate" in table["ipu_link_latency_s"][1]
    described = hardware.describe(spec)
    assert spec.name in described and "peak fp16 TFLOPS" in described


def test_bow_overrides_its_own_sources():
    assert "1.85" in hardware.sources(BOW)["clock_hz"][1]
    assert "1.33" in hardware.sources(MK2)["clock_hz"][1]


def test_variants_are_made_by_replace_and_are_frozen():
    small = MK2.with_tiles(4)
    assert (small.tiles, small.sram_per_tile, MK2.tiles) == (4, MK2.sram_per_tile, 1472)
    assert "chosen" in hardware.sources(small)["tiles"][1]
    assert TEACHING_IPU.tiles == 16
    with pytest.raises(dataclasses.FrozenInstanceError):
        MK2.tiles = 2
    assert hash(MK2) == hash(dataclasses.replace(MK2))


@pytest.mark.parametrize("tiles", [0, -3, 2.5])
def test_bad_tile_count_is_rejected_with_the_field_name(tiles):
    with pytest.raises(ValueError, match=r"tiles must be a positive integer"):
        dataclasses.replace(MK2, tiles=tiles)


def test_flops_per_cycle_by_dtype_and_cycle_conversion():
    assert MK2.flops_per_cycle("float16", "half") == 4 * MK2.flops_per_cycle("float32")
    assert MK2.seconds_to_cycles(1e-6) == 1330
    assert MK2.seconds_to_cycles(0) == 0


@pytest.mark.parametrize("spec", [MK2, BOW])
def test_fp16_products_with_float_partials_run_on_half_the_conv_units(spec):
    """poplibs getNumConvUnits: 8 conv units for half inputs with float partials (Poplar's default), 16 with
    half partials; fp32 inputs always sum in fp32, so their partials type changes nothing."""
    fp32 = spec.flops_per_cycle("float32")
    assert spec.flops_per_cycle("float16") == spec.flops_per_cycle("float16", "float") == 2 * fp32
    assert spec.flops_per_cycle("float16", "half") == 4 * fp32
    assert spec.flops_per_cycle("float32", "half") == fp32
    assert spec.peak_flops("float16") == spec.peak_flops("float16", "half") / 2
    assert spec.output_channel_group("float16", "half") == 2 * spec.output_channel_group("float16")
    described = hardware.describe(spec)
    assert "half partials" in described and "float partials (Poplar's default)" in described


def test_seconds_to_cycles():
    assert MK2.seconds_to_cycles(1e-6) == 1330
    assert MK2.seconds_to_cycles(0) == 0


def test_every_vector_figure_cites_poplibs():
    """The vector units' figures are read off poplibs' cycle estimators, each naming the one it comes from."""
    table = hardware.sources(hardware.VECTOR)
    assert set(hardware.VECTOR_CODELETS) < set(table)
    assert all("poplibs" in source or "popops" in source or "popnn" in source for _, source in table.values())


def test_vector_codelets_cost_per_element_and_unknown_ones_are_named():
    vector = hardware.VECTOR
    assert vector.cycles_per_element("exp") == 2 * vector.cycles_per_element("exp", itemsize=2)  # fp16: 4 per vector
    assert vector.cycles_per_element("divide") > vector.cycles_per_element("add") > vector.cycles_per_element("relu")
    for wrong in ("sine", "reduce_vertex_cycles"):
        with pytest.raises(ValueError, match=f"no vector codelet '{wrong}': use one of cast, add"):
            vector.cycles_per_element(wrong)


@pytest.mark.parametrize(
    "spec", [hardware.MK2, hardware.HOST, hardware.CODE, hardware.VECTOR], ids=lambda s: type(s).__name__
)
def test_figure_tables_line_up_however_long_a_name_or_value(spec):
    """`ipu-teach info`'s tables: every value ends in the same column, and its source starts in the same one."""
    table = hardware.describe(spec) if spec is hardware.MK2 else hardware.figure_table(spec)
    lines = table.splitlines()[: len(hardware.sources(spec))]
    ends = {
        line.index(f" {value!s}  ") + 1 + len(str(value))
        for line, (value, _) in zip(lines, hardware.sources(spec).values())
    }
    assert len(ends) == 1
