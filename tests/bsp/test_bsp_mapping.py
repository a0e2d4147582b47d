"""Tile mapping: linear mapping with a grain, bytes per tile, intervals, tile checks, memory."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach import bsp
from ipu_teach.bsp.mapping import check_positive_count, check_tiles_in_range

sizes = st.integers(0, 5_000)
tile_counts = st.integers(1, 64)
grains = st.integers(1, 40)


@settings(max_examples=60, deadline=None)
@given(sizes, tile_counts, grains, st.integers(0, 200))
def test_linear_mapping_covers_every_element_once_in_whole_grains(n, tiles, grain, min_per_tile):
    counts = bsp.linear_elements_per_tile(n, tiles, grain, min_per_tile)
    assert counts.shape == (tiles,) and counts.sum() == n and (counts >= 0).all()
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[counts > 0]
    held = counts[counts > 0]
    # every run starts on a grain boundary and ends on one, or at the tensor's end
    assert (starts % grain == 0).all()
    assert ((held % grain == 0) | (starts + held == n)).all()
    # runs are as even as whole grains allow: no tile holds more than ceil(grains / tiles) grains (or the minimum)
    assert (
        counts.max(initial=0)
        <= max(math.ceil(math.ceil(n / grain) / tiles), math.ceil(min_per_tile / grain), 1) * grain
    )


@settings(max_examples=60, deadline=None)
@given(sizes, tile_counts, grains, st.sampled_from([1, 2, 4, 8]))
def test_bytes_per_tile_sum_to_the_tensor_size(n, tiles, grain, itemsize):
    tile_of = bsp.linear_tile_of_element(n, tiles, grain)
    per_tile = bsp.bytes_per_tile(tile_of, itemsize, tiles)
    assert per_tile.sum() == n * itemsize
    np.testing.assert_array_equal(per_tile, bsp.linear_elements_per_tile(n, tiles, grain) * itemsize)


def test_linear_mapping_example_and_intervals():
    tile_of = bsp.linear_tile_of_element(10, 4, grain=2)
    np.testing.assert_array_equal(tile_of, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2])
    assert bsp.intervals(tile_of) == [(0, 0, 4), (1, 4, 8), (2, 8, 10)]
    assert bsp.intervals(np.array([], dtype=np.int64)) == []


def test_unmapped_elements_count_nowhere():
    tile_of = np.array([0, -1, 2, 2])
    np.testing.assert_array_equal(bsp.bytes_per_tile(tile_of, 4, 3), [4, 0, 8])


@pytest.mark.parametrize("tiles", [0, -1, 1.5, True])
def test_tile_count_must_be_positive_integer(tiles):
    with pytest.raises(bsp.GraphError, match=r"my device: tiles must be a positive integer"):
        check_positive_count(tiles, "my device: tiles")


def test_tile_out_of_range_names_the_object_and_the_range():
    with pytest.raises(bsp.GraphError, match=r"tensor 'w': tile 7 is out of range; this device has tiles 0\.\.3"):
        check_tiles_in_range([0, 7], 4, "tensor 'w'")


def test_linear_mapping_rejects_bad_grain():
    with pytest.raises(bsp.GraphError, match="grain must be >= 1"):
        bsp.linear_elements_per_tile(10, 2, grain=0)


def test_out_of_memory_names_tile_bytes_and_largest_tensors():
    usage = {"weights": np.array([100, 600]), "acts": np.array([0, 300]), "tiny": np.array([0, 1])}
    with pytest.raises(bsp.TileOutOfMemoryError) as caught:
        bsp.check_tile_memory(usage, sram_per_tile=800)
    error = caught.value
    assert (error.tile, error.needed, error.available) == (1, 901, 800)
    assert error.largest == [("weights", 600), ("acts", 300), ("tiny", 1)]
    assert "tile 1: 901 bytes needed but only 800 bytes" in str(error) and "weights (600 B)" in str(error)
    np.testing.assert_array_equal(bsp.check_tile_memory(usage, sram_per_tile=901), [100, 901])
