"""Tile mapping: which tile holds each element of a tensor, and the bytes that puts on every tile.

A mapping is an integer array with one tile index per element (flat, row-major), or -1 where an
element is not mapped yet. Everything here is vectorised over elements and tiles.
"""

from __future__ import annotations

import numpy as np

from ..integers import ceil_div
from .errors import GraphError

UNMAPPED = -1


def check_positive_count(count, what: str) -> int:
    """``count`` (of tiles, IPUs, ...) as an int, or a GraphError naming ``what`` if it is not a positive integer."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count <= 0:
        raise GraphError(f"{what} must be a positive integer, got {count!r}")
    return int(count)


def check_tiles_in_range(tile_indices, num_tiles: int, what: str) -> np.ndarray:
    """``tile_indices`` as an int64 array, or a GraphError naming ``what`` and the first bad tile."""
    tile_indices = np.asarray(tile_indices)
    if tile_indices.dtype.kind not in "iu":
        raise GraphError(f"{what}: tile indices must be integers, got dtype {tile_indices.dtype}")
    tile_indices = tile_indices.astype(np.int64, copy=False)
    bad = (tile_indices < 0) | (tile_indices >= num_tiles)
    if bad.any():
        raise GraphError(
            f"{what}: tile {int(tile_indices[bad].flat[0])} is out of range; this device has tiles 0..{num_tiles - 1}"
        )
    return tile_indices


def linear_elements_per_tile(
    num_elements: int, num_tiles: int, grain: int = 1, min_elements_per_tile: int = 0
) -> np.ndarray:
    """Elements per tile, shape ``(num_tiles,)``, of a linear mapping (like ``poputil::mapTensorLinearly``).

    The tensor is cut into grains of ``grain`` elements (the last one may be short); each tile gets
    a contiguous run of ``ceil(grains / tiles)`` grains (at least ``min_elements_per_tile`` elements
    worth), starting at tile 0. Tiles past the end get nothing.
    """
    num_tiles = check_positive_count(num_tiles, "linear mapping: the tile count")
    if grain < 1:
        raise GraphError(f"linear mapping: grain must be >= 1, got {grain}")
    grains = ceil_div(num_elements, grain)
    min_grains = ceil_div(min_elements_per_tile, grain) if min_elements_per_tile else 1
    per_tile = max(ceil_div(grains, num_tiles), min_grains) * grain
    starts = np.minimum(np.arange(num_tiles, dtype=np.int64) * per_tile, num_elements)
    return np.minimum(starts + per_tile, num_elements) - starts


def linear_tile_of_element(
    num_elements: int, num_tiles: int, grain: int = 1, min_elements_per_tile: int = 0
) -> np.ndarray:
    """The tile of each element under :func:`linear_elements_per_tile`, shape ``(num_elements,)``."""
    counts = linear_elements_per_tile(num_elements, num_tiles, grain, min_elements_per_tile)
    return np.repeat(np.arange(num_tiles, dtype=np.int64), counts)


def bytes_per_tile(tile_of_element: np.ndarray, itemsize: int, num_tiles: int) -> np.ndarray:
    """Bytes each tile holds, shape ``(num_tiles,)``; unmapped elements count nowhere."""
    mapped = tile_of_element[tile_of_element != UNMAPPED]
    return np.bincount(mapped, minlength=num_tiles).astype(np.int64) * int(itemsize)


def intervals(tile_of_element: np.ndarray) -> list:
    """The mapping as Poplar prints it: ``[(tile, start, stop), ...]`` runs of consecutive elements."""
    flat = np.asarray(tile_of_element).ravel()
    if flat.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(flat)) + 1
    starts = np.concatenate(([0], breaks))
    stops = np.concatenate((breaks, [flat.size]))
    return [(int(flat[a]), int(a), int(b)) for a, b in zip(starts, stops)]
