"""Where on the tiles each compute set and tensor sits: one placement that every per-tile array goes through.

A mapping is first laid out from its own first tile (a linear mapping's grains, a matrix product plan's
tiles); :func:`place` then moves that first tile to where Poplar starts it, in ascending order and wrapping
past the last tile, as poputil's ``remapWithOffset`` does (poplibs lib/poputil/TileMapping.cpp @7eac0f2,
``calcLinearTileMapping(..., offset, ascendingOrder)``). Moving a mapping changes which tiles hold it, never
how much a tile holds, so a compute set's cycles (the most on any tile) and every total stay the same.

Where Poplar starts each mapping:

- a matrix product (a convolution or matmul plan): on tile 0, ascending. poplin's ``getStartTile``
  (lib/poplin/ConvPlan.cpp @7eac0f2) returns tile 0 unless the option ``enableConvDithering`` is set, and it
  is off by default (lib/poplin/ConvOptions.hpp: "Use the ConvParams to pseudo-randomly select a start tile
  and direction"); Graphcore's CNN examples offer it as ``--conv-dithering`` "to improve tile memory
  balance", default False (graphcore/examples vision/cnns/tensorflow2/configuration/terminal_argparse.py);
- any other tensor (an op's output that no product lays out, a weight): mapped linearly where the last one
  ended. Graphcore's TensorFlow allocates such tensors with ``AddPlainTensor(..., offset=true)``, which keeps a
  next-tile offset per graph (``LinearMapperState``, tensorflow/compiler/plugin/poplar/driver/tensor.cc and
  tools/mapping_helper.cc @b2127bb), and poputil's ``calcLinearTileMappingAndNewOffset`` documents the same
  contract (include/poputil/TileMapping.hpp @7eac0f2: "the new offset ... equal to the last plus one tile used
  for the mapping"). A tensor spread over every tile is neither moved nor moves the offset (mapping_helper.cc:
  "Do not rotate tensors scattered across all tiles"). An element-wise op's vertices run where its output is
  (popops' element-wise ops work on the tiles of the tensor they write), so its compute set starts there too;
- a reduction's intermediate results: at poputil's ``chooseMappingOffset`` of their shape, a hash with the
  golden-ratio seed (lib/popops/reduction/ReductionStages.cpp @7eac0f2: seed ``0x9e3779b9`` combined with the
  reduction's index, then ``boost::hash_range`` of the output's shape, modulo the tiles).

So small products crowd the first tiles (as on a real IPU without dithering) while the many small tensors
and vector compute sets around them are spread over the chip.
"""

from __future__ import annotations

import numpy as np

GOLDEN_RATIO_SEED = 0x9E3779B9
"""The seed poplibs starts its start-tile hashes from (2^32/phi: ``chooseMappingOffset``, ``getStartTile``)."""
PRODUCT_START_TILE = 0
"""The tile a matrix product's plan starts on: poplin's ``getStartTile`` without ``enableConvDithering``."""
_SIZE_T = (1 << 64) - 1


def place(first_tiles, start: int, tiles: int) -> np.ndarray:
    """A per-tile array of ``tiles`` entries with ``first_tiles[0]`` on tile ``start``, ``first_tiles[1]`` on the
    next tile and so on, wrapping past the last tile (poputil's ``remapWithOffset``, ascending).

    >>> place(np.array([5, 5, 3]), 3, 4).tolist()
    [5, 3, 0, 5]
    >>> int(place(np.array([5, 5, 3]), 3, 4).sum()), int(place(np.array([5, 5, 3]), 3, 4).max())
    (13, 5)
    """
    first_tiles = np.asarray(first_tiles, dtype=np.int64)
    if first_tiles.size > tiles:
        raise ValueError(f"a mapping over {first_tiles.size} tiles does not fit on {tiles} tiles")
    array = np.zeros(tiles, dtype=np.int64)
    array[: first_tiles.size] = first_tiles
    return np.roll(array, int(start) % tiles)


def width(first_tiles) -> int:
    """The tiles a mapping laid from its first tile spans (to its last non-empty tile)."""
    used = np.flatnonzero(np.asarray(first_tiles))
    return int(used[-1]) + 1 if used.size else 0


class LinearMapper:
    """The next-tile offset of one graph (Graphcore TensorFlow's ``LinearMapperState``): each tensor mapped
    linearly starts on the tile after the last one the previous tensor used.

    >>> mapper = LinearMapper(8)
    >>> mapper.take(np.array([1, 1, 1])), mapper.take(np.array([2, 2])), mapper.take(np.full(8, 4)), mapper.take([1])
    (0, 3, 0, 5)
    """

    def __init__(self, tiles: int):
        self.tiles = int(tiles)
        self.next_tile = 0

    def take(self, first_tiles) -> int:
        """The start tile of a mapping laid from its first tile (``first_tiles``), and move the offset past it."""
        used = width(first_tiles)
        if used >= self.tiles:  # spread over every tile: neither moved nor moving the offset
            return 0
        start = self.next_tile
        self.next_tile = (self.next_tile + used) % self.tiles
        return start


def hash_combine(seed: int, value: int) -> int:
    """``boost::hash_combine`` on a 64-bit ``size_t`` as Boost defined it before 1.81 (an integer hashes to itself);
    Poplar SDKs built against another Boost would pick other, equally spread, offsets."""
    # boost::hash_combine adds the same 2^32/phi constant that poplibs seeds its hashes with
    return (seed ^ ((int(value) + GOLDEN_RATIO_SEED + (seed << 6) + (seed >> 2)) & _SIZE_T)) & _SIZE_T


def reduction_offset(shape, tiles: int, index: int = 0) -> int:
    """The start tile of a reduction's intermediate results of ``shape``: poputil's ``chooseMappingOffset`` with
    popops' seed (the golden-ratio seed combined with the reduction's ``index``).

    >>> reduction_offset((1000,), 1472) == reduction_offset((1000,), 1472), 0 <= reduction_offset((10, 3), 1472) < 1472
    (True, True)
    """
    seed = hash_combine(GOLDEN_RATIO_SEED, index)
    for dim in shape:
        seed = hash_combine(seed, dim)
    return seed % tiles
