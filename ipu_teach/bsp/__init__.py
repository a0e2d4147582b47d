"""The BSP engine of the simulated IPU: tile mapping, compute sets, exchange, sync, programs, timeline.

Low level (for compilers): build ``CostedComputeSet`` cycles and ``Exchange`` bytes as numpy arrays,
arrange ``ComputeSuperstep``/``ExchangeSuperstep``/stream steps with ``Sequence``/``Repeat``, and
``CostEngine(program).run()`` returns a :class:`Timeline`. The Poplar-like API for the course lives in
:mod:`ipu_teach.bsp.poplar`; figures in :mod:`.figures` and Chrome traces in :mod:`.trace` (imported on use).

Example:

>>> from ipu_teach import bsp, hardware
>>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("work", np.full(4, 100)))
>>> bsp.CostEngine(bsp.Repeat(3, step), hardware.MK2.with_tiles(4)).run().totals()
{'compute': 300, 'sync': 450, 'exchange': 0}
"""

from .compute import VERTEX_OVERHEAD_CYCLES, CostedComputeSet, tile_cycles_from_vertices
from .engine import CostEngine
from .errors import GraphError, TileOutOfMemoryError
from .exchange import Exchange, exchange_from_transfers
from .mapping import bytes_per_tile, ceil_div, intervals, linear_elements_per_tile, linear_tile_of_element
from .memory import allocated_per_tile, check_tile_memory
from .programs import (
    ComputeSuperstep,
    DeviceToHost,
    ExchangeSuperstep,
    HostCall,
    HostToDevice,
    HostWait,
    IPULinkCopy,
    Parallel,
    Program,
    Repeat,
    Sequence,
    StreamingMemoryCopy,
)
from .sync import SyncKind
from .timeline import Timeline

ComputeSet = CostedComputeSet
"""The name ``CostedComputeSet`` had before 2026-11 (one release; ``bsp.poplar.ComputeSet`` is Poplar's)."""
Engine = CostEngine
"""The name ``CostEngine`` had before 2026-11 (one release; ``bsp.poplar.Engine`` is Poplar's)."""
Execute = ComputeSuperstep
"""The name ``ComputeSuperstep`` had before 2026-11 (one release; ``bsp.poplar.Execute`` is Poplar's)."""
Copy = ExchangeSuperstep
"""The name ``ExchangeSuperstep`` had before 2026-11 (one release; ``bsp.poplar.Copy`` is Poplar's)."""

__all__ = [
    "VERTEX_OVERHEAD_CYCLES",
    "ComputeSet",
    "ComputeSuperstep",
    "Copy",
    "CostEngine",
    "CostedComputeSet",
    "DeviceToHost",
    "Engine",
    "Exchange",
    "ExchangeSuperstep",
    "Execute",
    "GraphError",
    "HostCall",
    "HostToDevice",
    "HostWait",
    "IPULinkCopy",
    "Parallel",
    "Program",
    "Repeat",
    "Sequence",
    "StreamingMemoryCopy",
    "SyncKind",
    "TileOutOfMemoryError",
    "Timeline",
    "allocated_per_tile",
    "bytes_per_tile",
    "check_tile_memory",
    "exchange_from_transfers",
    "intervals",
    "linear_elements_per_tile",
    "linear_tile_of_element",
    "tile_cycles_from_vertices",
]
