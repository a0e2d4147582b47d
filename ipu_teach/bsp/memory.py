"""Tile memory: the bytes mapped to each tile against its SRAM, and the out-of-memory error."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .errors import TileOutOfMemoryError

LARGEST_SHOWN = 3


def check_tile_memory(bytes_by_tensor: Mapping[str, np.ndarray], sram_per_tile: int) -> np.ndarray:
    """Total bytes per tile of all tensors; raise TileOutOfMemoryError at the first tile over SRAM.

    ``bytes_by_tensor`` maps a tensor name to its bytes per tile (same shape for all tensors).
    """
    if not bytes_by_tensor:
        return np.zeros(0, dtype=np.int64)
    names = list(bytes_by_tensor)
    stacked = np.stack([np.asarray(bytes_by_tensor[name], dtype=np.int64) for name in names])
    total = stacked.sum(axis=0)
    over = np.flatnonzero(total.ravel() > sram_per_tile)
    if over.size:
        tile = int(over[0])
        on_tile = stacked.reshape(len(names), -1)[:, tile]
        order = np.argsort(-on_tile, kind="stable")[:LARGEST_SHOWN]
        largest = [(names[i], int(on_tile[i])) for i in order if on_tile[i] > 0]
        raise TileOutOfMemoryError(tile, int(total.ravel()[tile]), int(sram_per_tile), largest)
    return total
