"""Tile memory: the bytes mapped to each tile against its SRAM (memory reused by tensors never live together),
and the out-of-memory error."""

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


def allocated_per_tile(always_live: np.ndarray, not_always_live, steps: int) -> np.ndarray:
    """Bytes each tile must hold: its always-live bytes plus the most its not-always-live tensors need at once.

    Poplar gives tensors that are never live at the same program step the same addresses (PopVision shows
    them as overlapped), so a tile needs the peak over the program steps of what is live on it, not the sum
    of every tensor ever mapped there. ``not_always_live`` holds ``(per_tile bytes, first step, last step)``
    triples, both steps included; a range past the last of ``steps`` program steps is cut there.

    Example:

    >>> import numpy as np
    >>> a, b = np.array([100, 0]), np.array([60, 60])   # live at steps 0-1 and 2-3: they share memory
    >>> allocated_per_tile(np.array([10, 10]), [(a, 0, 1), (b, 2, 3)], steps=4).tolist()
    [110, 70]
    """
    total = np.asarray(always_live, dtype=np.int64).copy()
    items = list(not_always_live)
    if not items:
        return total
    steps = max(int(steps), 1)
    change = np.zeros((steps + 1, total.size), dtype=np.int64)  # +bytes where a tensor's range starts, - after
    for per_tile, first, last in items:
        first = min(max(int(first), 0), steps - 1)
        last = min(max(int(last), first), steps - 1)
        change[first] += per_tile
        change[last + 1] -= per_tile
    return total + np.cumsum(change[:-1], axis=0).max(axis=0)
