"""Exchange: the bytes each tile receives and sends between compute phases.

The exchange costs ``g * max_t h_t`` cycles where ``h_t`` is the larger of a tile's bytes in and
out (the BSP h-relation) and ``g`` is 1 / (exchange bytes per cycle per tile).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compute import as_per_tile
from .errors import GraphError


@dataclass(frozen=True, eq=False)
class Exchange:
    """The exchange phase of one superstep: bytes received and sent per tile, shape ``(tiles,)`` or ``(ipus, tiles)``.

    The IPU's exchange is receiver-selected: a tile puts a value on the exchange once and every tile that
    needs it picks it up, so a phase lasts as long as its busiest tile takes to receive (and send) its bytes.

    Args:
      received: Array-like of bytes each tile receives.
      sent: Array-like of bytes each tile sends. Default: None, zeros.
      name: The exchange's name. Default: ``"exchange"``.

    Example:

    >>> from ipu_teach import bsp
    >>> bsp.Exchange(received=[1024, 0])
    Exchange(received=array([1024,    0], dtype=int32), sent=array([0, 0], dtype=int32), name='exchange')
    """

    received: np.ndarray
    sent: np.ndarray = None
    name: str = "exchange"

    def __post_init__(self):
        received = as_per_tile(self.received, f"exchange {self.name!r} (received)", "bytes", kinds="iu")
        sent = (
            np.zeros_like(received)
            if self.sent is None
            else as_per_tile(self.sent, f"exchange {self.name!r} (sent)", "bytes", kinds="iu")
        )
        if received.shape != sent.shape:
            raise GraphError(
                f"exchange {self.name!r}: received {received.shape} and sent {sent.shape} must have the same shape"
            )
        object.__setattr__(self, "received", received)
        object.__setattr__(self, "sent", sent)

    @property
    def h(self) -> np.ndarray:
        """Per-tile h-relation: the larger of bytes in and bytes out."""
        return np.maximum(self.received, self.sent)

    def max_h(self) -> np.ndarray:
        """The largest h over the tiles of each IPU: shape () for (tiles,) arrays, (ipus,) for (ipus, tiles)."""
        return np.maximum(self.received.max(axis=-1, initial=0), self.sent.max(axis=-1, initial=0))


def exchange_from_transfers(
    src_tiles, dst_tiles, nbytes, num_tiles: int, name: str = "exchange", elements=None
) -> Exchange:
    """The Exchange for transfers of ``nbytes[i]`` from ``src_tiles[i]`` to ``dst_tiles[i]`` (vectorised).

    The IPU's exchange is receiver-selected: a tile puts a value on the exchange once and every tile that
    needs it picks it up. Give ``elements`` (an id per transfer for the value moved) and a value sent to many
    tiles counts once on its sender (a broadcast); without them every transfer is a separate send.
    """
    src = np.asarray(src_tiles, dtype=np.int64)
    dst = np.asarray(dst_tiles, dtype=np.int64)
    weights = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), src.shape)
    moving = src != dst
    received = np.bincount(dst[moving], weights=weights[moving], minlength=num_tiles)
    once = moving
    if elements is not None:
        ids = np.broadcast_to(np.asarray(elements, dtype=np.int64), src.shape)
        once = np.zeros_like(moving)
        _, first = np.unique(ids[moving], return_index=True)
        once[np.flatnonzero(moving)[first]] = True
    sent = np.bincount(src[once], weights=weights[once], minlength=num_tiles)
    return Exchange(received.astype(np.int64), sent.astype(np.int64), name=name)
