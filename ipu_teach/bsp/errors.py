"""Errors of the BSP engine: each names the object at fault and says what to change."""

from __future__ import annotations


class GraphError(ValueError):
    """A graph, mapping, vertex or program that cannot run as built."""


class TileOutOfMemoryError(MemoryError):
    """Raised when more bytes are mapped to a tile than its SRAM holds: the IPU's out-of-memory error.

    An IPU has no memory but its tiles' SRAM (624 KiB each on a Mk2), so a tensor that does not fit on
    the tiles it is mapped to is an error at compile time, not a slowdown. The message names the tile,
    the bytes and the largest tensors there; ``tile``, ``needed``, ``available`` and ``largest`` hold them.

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
    >>> weights = graph.add_variable("float32", (200_000,), "weights")     # 800,000 bytes
    >>> try:
    ...     graph.set_tile_mapping(weights, 0)
    ... except poplar.TileOutOfMemoryError as error:
    ...     print(error.tile, error.needed, error.available)
    0 800000 638976
    """

    def __init__(self, tile: int, needed: int, available: int, largest: list):
        self.tile, self.needed, self.available, self.largest = tile, needed, available, largest
        tensors = ", ".join(f"{name} ({nbytes:,} B)" for name, nbytes in largest) or "none"
        super().__init__(
            f"Out of memory on tile {tile}: {needed:,} bytes needed but only {available:,} bytes of SRAM "
            f"available. Largest tensors on tile {tile}: {tensors}. Spread them over more tiles "
            f"(map_tensor_linearly), make them smaller, or use more tiles/IPUs."
        )
