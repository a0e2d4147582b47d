"""I/O tiles (``IPUConfig.io_tiles``): overlapping the host transfers with the computation.

Graphcore's TensorFlow ("Efficient IPU I/O" in graphcore/tensorflow's
``tensorflow/compiler/plugin/poplar/docs``): with ``io_tiles.num_io_tiles = n`` and
``io_tiles.place_ops_on_io_tiles = True``, n tiles of each IPU only stream data, so "the data
transfer and the computation can overlap in time"; those tiles "cannot participate in the
computation", and too few of them cannot hold the transferred tensors. The overlap works for a
single-IPU program (and the grouped pipeline schedule, which ipu-teach does not simulate with I/O tiles).

The model here: the program computes on ``tiles - n`` tiles; while one step computes, the host
streams the next batch into the I/O tiles (and the last results out of them), so a step pays only
what its compute does not hide, plus on-chip copies between the I/O tiles and the compute tiles.
The streamed tensors must fit in ``io_tile_available_memory_proportion`` of the I/O tiles' memory.
Reports and the tile-memory explorer show the compute tiles (the program's tiles) only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .. import bsp, hardware


@dataclass(frozen=True)
class IOTiles:
    """How many tiles of each IPU stream data only (0: none, Graphcore's default)."""

    count: int = 0
    memory_proportion: float = 0.9

    @classmethod
    def from_config(cls, options, spec) -> "IOTiles":
        """Checked ``IPUConfig.io_tiles``; n I/O tiles need ``place_ops_on_io_tiles`` to be used, as in Graphcore's."""
        count, place = options.num_io_tiles, options.place_ops_on_io_tiles
        proportion = options.io_tile_available_memory_proportion
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count < spec.tiles:
            raise ValueError(
                f"IPUConfig.io_tiles.num_io_tiles: expected a whole number from 0 to {spec.tiles - 1} "
                f"(tiles of the IPU kept for computing: at least one), got {count!r}"
            )
        if isinstance(proportion, bool) or not isinstance(proportion, (int, float)) or not 0 < proportion <= 1:
            raise ValueError(
                "IPUConfig.io_tiles.io_tile_available_memory_proportion: expected a number in (0, 1], "
                f"got {proportion!r}"
            )
        if place and count == 0:
            raise ValueError(
                "IPUConfig.io_tiles.place_ops_on_io_tiles is True but num_io_tiles is 0: set "
                "io_tiles.num_io_tiles (e.g. 32 or 128) to the tiles that should stream data"
            )
        return cls(count if place else 0, float(proportion))

    def compute_spec(self, spec):
        """The IPU the program computes on: the tiles that are not I/O tiles."""
        if not self.count:
            return spec
        tiles = spec.tiles - self.count
        note = ("tiles", f"chosen: {self.count} of {spec.tiles} tiles are I/O tiles (IPUConfig.io_tiles)")
        return replace(
            spec, name=f"{spec.name}, {tiles} compute tiles", tiles=tiles, source_notes=spec.source_notes + (note,)
        )

    def check_fits(self, streamed_bytes: int, spec) -> None:
        """The I/O tiles hold one step's streamed tensors, or the program cannot be built."""
        capacity = int(self.count * spec.sram_per_tile * self.memory_proportion)
        if streamed_bytes > capacity:
            needed = bsp.ceil_div(streamed_bytes, int(spec.sram_per_tile * self.memory_proportion))
            raise ValueError(
                f"The {self.count} I/O tiles hold {capacity:,} B ({self.memory_proportion:g} of their "
                f"memory) but one step streams {streamed_bytes:,} B: set IPUConfig.io_tiles.num_io_tiles "
                f"to at least {needed}, or raise io_tile_available_memory_proportion"
            )

    def streams(self, graph, spec, step_seconds: float, infeed: bool, outfeed: bool, ipus: int) -> tuple:
        """One step's infeed and outfeed through the I/O tiles: on-chip copies from and to them, and a
        host stream of only the bytes the previous step's ``step_seconds`` of compute could not hide."""
        input_bytes = graph.input_bytes if infeed else 0
        output_bytes = graph.output_bytes if outfeed else 0
        hidden = int(step_seconds * hardware.HOST.stream_bytes_per_s(spec, ipus))
        late = max(0, input_bytes + output_bytes - hidden)
        before = [bsp.HostToDevice(late, label="infeed (not hidden by compute)")] if late else []
        if input_bytes:
            before.append(bsp.ExchangeSuperstep(self._copy(input_bytes, spec, "infeed (from I/O tiles)", True)))
        after = (
            [bsp.ExchangeSuperstep(self._copy(output_bytes, spec, "outfeed (to I/O tiles)", False))]
            if output_bytes
            else []
        )
        return before, after

    def _copy(self, nbytes, spec, label, into_compute):
        """The on-chip copy between the I/O tiles and the compute tiles. Only compute tiles are in the
        program's arrays, so the I/O tiles' side (nbytes / count each) stands on the first ``count`` entries:
        the exchange costs ``max(nbytes / count, nbytes / compute tiles)`` bytes of h, as it would."""
        compute_side = bsp.linear_elements_per_tile(nbytes, spec.tiles).astype(np.int64)
        io_side = np.zeros(spec.tiles, np.int64)
        io_side[: min(self.count, spec.tiles)] = bsp.ceil_div(nbytes, self.count)
        received, sent = (compute_side, io_side) if into_compute else (io_side, compute_side)
        return bsp.Exchange(received, sent, name=label)
