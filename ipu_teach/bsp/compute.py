"""Compute sets: the work every tile does in one superstep, as cycles per tile.

A compute set's cost is an array of cycles, shape ``(tiles,)`` (the same on every IPU) or
``(ipus, tiles)``. A later compiler fills it from FLOPs; the Poplar-like API from vertex estimates.
Per-tile arrays are stored as int32 (a superstep of 2**31 cycles would last over a second), which
halves the memory traffic of the engine's reductions; pass int32 to skip a conversion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import GraphError

VERTEX_OVERHEAD_CYCLES = 10
"""Approximate worker instructions to launch a vertex (argument set-up, call, return)."""


PER_TILE_DTYPE = np.int32
PER_TILE_MAX = np.iinfo(PER_TILE_DTYPE).max


def as_per_tile(values, what: str, unit: str, kinds: str = "iuf") -> np.ndarray:
    """``values`` as a non-negative int32 array of ``unit`` (cycles or bytes), or a GraphError naming ``what``.

    ``kinds`` are the numpy dtype kinds accepted (floats are rounded up to whole units).
    """
    array = np.asarray(values)
    if array.dtype.kind not in kinds:
        kind = "integers" if "f" not in kinds else "numbers"
        raise GraphError(f"{what}: {unit} must be {kind}, got dtype {array.dtype}")
    if array.size and array.dtype != PER_TILE_DTYPE:
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise GraphError(f"{what}: {unit} must be finite")
        if array.max() > PER_TILE_MAX:
            raise GraphError(f"{what}: {unit} per tile must be below 2**31, found {array.max()}")
        array = np.ceil(array) if array.dtype.kind == "f" else array
    if array.size and array.min() < 0:
        raise GraphError(f"{what}: {unit} must be >= 0, found {array.min()}")
    return array.astype(PER_TILE_DTYPE, copy=False)


@dataclass(frozen=True, eq=False)
class CostedComputeSet:
    """The compute phase of one superstep: named compute cycles per tile, shape ``(tiles,)`` or ``(ipus, tiles)``.

    The low-level form of a compute set, for costing programs without writing vertices: the superstep
    lasts as long as its busiest tile, which is why a balanced mapping matters.

    Args:
      name: The compute set's name, shown in timelines.
      cycles: Array-like of non-negative cycles per tile (floats are rounded up).

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp
    >>> bsp.CostedComputeSet("matmul", [100, 300])
    CostedComputeSet(name='matmul', cycles=array([100, 300], dtype=int32))
    """

    name: str
    cycles: np.ndarray

    def __post_init__(self):
        cycles = as_per_tile(self.cycles, f"compute set {self.name!r}", "cycles")
        if cycles.ndim not in (1, 2):
            raise GraphError(
                f"compute set {self.name!r}: cycles must have shape (tiles,) or (ipus, tiles), got {cycles.shape}"
            )
        object.__setattr__(self, "cycles", cycles)


def tile_cycles_from_vertices(vertex_tiles, vertex_cycles, num_tiles: int, threads_per_tile: int) -> np.ndarray:
    """Cycles per tile when each vertex runs on one worker thread, dealt round-robin over the tile's threads.

    A vertex's estimate counts its worker's instructions. The workers are barrel-scheduled: they take turns,
    one instruction each, so a worker issues once every ``threads_per_tile`` cycles. The tile is busy until its
    most loaded worker finishes: six vertices of n instructions end together after 6n cycles, and a lone
    vertex takes as long, leaving five issue slots in every six empty.
    """
    tiles = np.asarray(vertex_tiles, dtype=np.int64)
    cycles = np.asarray(vertex_cycles, dtype=np.int64)
    order = np.argsort(tiles, kind="stable")
    first_of_tile = np.searchsorted(tiles[order], tiles[order], side="left")
    rank = np.empty_like(tiles)
    rank[order] = np.arange(tiles.size) - first_of_tile
    load = np.zeros((num_tiles, threads_per_tile), dtype=np.int64)
    np.add.at(load, (tiles, rank % threads_per_tile), cycles)
    return load.max(axis=1) * threads_per_tile
