"""Errors of the BSP engine: each names the object at fault and says what to change."""
from __future__ import annotations


class GraphError(ValueError):
    """A graph, mapping, vertex or program that cannot run as built."""


class TileOutOfMemoryError(MemoryError):
    """More bytes mapped to a tile than its SRAM holds (the IPU's out-of-memory error)."""

    def __init__(self, tile: int, needed: int, available: int, largest: list):
        self.tile, self.needed, self.available, self.largest = tile, needed, available, largest
        tensors = ", ".join(f"{name} ({nbytes:,} B)" for name, nbytes in largest) or "none"
        super().__init__(
            f"Out of memory on tile {tile}: {needed:,} bytes needed but only {available:,} bytes of SRAM "
            f"available. Largest tensors on tile {tile}: {tensors}. Spread them over more tiles "
            f"(map_tensor_linearly), make them smaller, or use more tiles/IPUs.")
