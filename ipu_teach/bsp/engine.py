"""The CostEngine: cost a program tree superstep by superstep with BSP, ``max(w) + l + g * max(h)``.

Plain numpy in, a :class:`Timeline` out. Per superstep and IPU: ``w`` = slowest tile's compute
cycles, ``l`` = the sync's cycles (plus waiting for the slowest IPU when the sync spans IPUs),
``g * max(h)`` = the exchange. Each distinct step is costed once, vectorised over IPUs and tiles.
Inside a ``Parallel`` block each IPU runs its own steps (the other IPUs' rows are zero there), and the
block's closing sync adds each IPU's wait for the slowest.
"""

from __future__ import annotations

import numpy as np

from ..hardware import HOST, MK2
from .errors import GraphError
from .mapping import ceil_div, check_positive_count
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
from .timeline import CYCLE_LIMIT, Timeline

STREAMING_MEMORY = "streaming memory"
"""The kind of a Streaming Memory copy's row: each IPU's own link, so it may run inside a ``Parallel`` block."""


class CostEngine:
    """Costs a BSP program on ``ipus`` IPUs of ``spec``; ``run()`` returns the Timeline.

    The low-level engine under ``poplar.Engine`` and the Keras executor: it computes no values, only
    what each superstep costs (compute, sync, exchange, host and IPU-Link transfers), so a million
    repeats cost no more to simulate than one. Shapes and kinds are checked when the CostEngine is created,
    so errors name the step at fault.

    Args:
      program: A ``bsp`` program (``ComputeSuperstep``, ``Repeat``, ``Sequence``, ``HostToDevice``, ...).
      spec: The ``IPUSpec`` to cost on. Default: ``hardware.MK2``.
      ipus: Integer, the number of IPUs. Default: 1.

    Raises:
      GraphError: for a program that cannot run as built, or that would run more cycles than a timeline
        counts (``CYCLE_LIMIT``, 2**63 - 1: the message names the Repeat and its count).

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp, hardware
    >>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("matmul", np.full(4, 2_000)),
    ...                             exchange=bsp.Exchange(received=np.full(4, 1_024)))
    >>> program = bsp.Sequence(bsp.HostToDevice(4 * 2**20), bsp.Repeat(1_000_000, step))
    >>> bsp.CostEngine(program, hardware.MK2.with_tiles(4)).run().totals()
    {'compute': 2000000000, 'sync': 150013000, 'exchange': 256803569}
    """

    def __init__(self, program: Program, spec=MK2, ipus: int = 1):
        if not isinstance(program, Program):
            raise GraphError(
                f"CostEngine needs a program (Sequence, Repeat, ComputeSuperstep, ...), got {type(program).__name__}"
            )
        self.spec, self.ipus = spec, check_positive_count(ipus, "CostEngine: the number of IPUs")
        self._labels, self._kinds, self._counts, self._costs, self._tile_cycles = [], [], [], [], []
        self._moved = []
        self._row_of = {}
        self._zeros = np.zeros(self.ipus, dtype=np.int64)
        self._only_ipu = None
        """While walking a Parallel block: the IPU whose program is walked (the other IPUs' rows are zero)."""
        schedule, cycles = self._walk(program, 1)
        _check_cycles(cycles, "the program", self.spec)
        self._schedule = tuple(schedule)
        self._timeline = self._make_timeline()

    def run(self) -> Timeline:
        """Returns the Timeline of one run (deterministic: the same program always gives the same cycles).

        Example:

        >>> import numpy as np
        >>> from ipu_teach import bsp, hardware
        >>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("matmul", np.full(4, 2_000)),
        ...                             exchange=bsp.Exchange(received=np.full(4, 1_024)))
        >>> print(bsp.CostEngine(bsp.Repeat(10, step), hardware.MK2.with_tiles(4)).run().summary())
        superstep                      runs   compute    sync  exchange    cycles
        matmul                           10      2000     150       256      2406
        total: 24,060 cycles = 18.090 us simulated on GC200 (Mk2) (4 tiles); compute 20,000, sync 1,500, exchange
        2,560; tile utilisation 83.1%
        """
        return self._timeline

    # -- compiling the program tree ------------------------------------------------------------
    def _walk(self, program, multiplier):
        """The schedule items of ``program`` (a list) and its exact cycles per IPU (Python ints, so a
        count too large for the timeline's int64 arrays is named here instead of wrapping around)."""
        if isinstance(program, Sequence):
            items, cycles = [], [0] * self.ipus
            for child in program.programs:
                child_items, child_cycles = self._walk(child, multiplier)
                items += child_items
                cycles = [a + b for a, b in zip(cycles, child_cycles)]
            return items, cycles
        if isinstance(program, Repeat):
            body, body_cycles = self._walk(program.body, multiplier * program.count)
            cycles = [program.count * c for c in body_cycles]
            _check_cycles(cycles, f"Repeat {program.label!r} (count {program.count:,})", self.spec)
            return [(program.count, tuple(body))], cycles
        if isinstance(program, Parallel):
            return self._walk_parallel(program, multiplier)
        row = self._row(program, multiplier)
        return [row], [int(c) for c in sum(self._costs[row])]

    def _walk_parallel(self, program, multiplier):
        """Each IPU's program on its own IPU, then the closing cross-IPU sync: the sync's cycles plus each
        IPU's wait for the slowest one's program."""
        if self._only_ipu is not None:
            raise GraphError(f"Parallel {program.label!r} is inside another Parallel block: nest Sequences instead")
        if len(program.programs) != self.ipus:
            raise GraphError(
                f"Parallel {program.label!r} has {len(program.programs)} program(s) for {self.ipus} IPU(s): "
                "give one program per IPU of the CostEngine (an empty Sequence for an idle IPU)"
            )
        items, cycles = [], [0] * self.ipus
        for ipu, child in enumerate(program.programs):
            self._only_ipu = ipu
            try:
                child_items, child_cycles = self._walk(child, multiplier)
            finally:
                self._only_ipu = None
            items += child_items
            cycles = [a + b for a, b in zip(cycles, child_cycles)]
        busy = np.array(cycles, dtype=np.int64)
        wait = self._sync(busy, SyncKind.CROSS_IPU)
        key = ("parallel", id(program))
        row = self._row_of.get(key)
        if row is None:
            row = self._add_row(
                key, (self._zeros, wait, self._zeros), "sync", None, self._zeros, f"{program.label}/sync"
            )
        self._counts[row] += multiplier
        return items + [row], [a + int(b) for a, b in zip(cycles, wait)]

    def _row(self, step, multiplier):
        row = self._row_of.get((id(step), self._only_ipu))
        if row is None:
            compute, sync, exchange, kind, tile_cycles = self._cost(step)
            moved = self._per_ipu(step.nbytes, step.label) if hasattr(step, "nbytes") else self._zeros
            if self._only_ipu is not None:  # the step runs on one IPU of a Parallel block: the others idle
                if kind not in ("compute", "exchange", STREAMING_MEMORY):
                    raise GraphError(
                        f"{step.label!r} ({kind}) is inside a Parallel block, which holds on-chip supersteps: "
                        "put host streams and IPU-Link copies between Parallel blocks"
                    )
                compute, sync, exchange = (self._on_own_ipu(cost) for cost in (compute, sync, exchange))
                if tile_cycles is not None:
                    tile_cycles = self._on_own_ipu(np.broadcast_to(tile_cycles, (self.ipus, self.spec.tiles)))
            row = self._add_row(
                (id(step), self._only_ipu), (compute, sync, exchange), kind, tile_cycles, moved, step.label
            )
        self._counts[row] += multiplier
        return row

    def _on_own_ipu(self, per_ipu):
        """``per_ipu`` (first axis: IPUs) kept for the IPU of the Parallel block being walked, zero elsewhere."""
        kept = np.zeros_like(per_ipu)
        kept[self._only_ipu] = per_ipu[self._only_ipu]
        return kept

    def _add_row(self, key, costs, kind, tile_cycles, moved, label):
        row = self._row_of[key] = len(self._labels)
        self._moved.append(moved)
        self._labels.append(label)
        self._kinds.append(kind)
        self._counts.append(0)
        self._costs.append(costs)
        self._tile_cycles.append(tile_cycles)
        return row

    def _check_per_tile(self, array, what):
        tiles = self.spec.tiles
        if array.shape not in ((tiles,), (self.ipus, tiles)):
            raise GraphError(
                f"{what}: shape {array.shape} does not fit the device; expected (tiles,) = ({tiles},) "
                f"or (ipus, tiles) = ({self.ipus}, {tiles})"
            )

    def _per_ipu(self, values, what):
        """``values`` (a scalar or one per IPU) as an int64 array of shape (ipus,)."""
        if values.ndim == 1 and values.shape != (self.ipus,):
            raise GraphError(f"{what}: {values.shape[0]} values given for {self.ipus} IPU(s)")
        return self._zeros + values

    def _cost(self, step):
        spec, zeros = self.spec, np.zeros(self.ipus, dtype=np.int64)
        if isinstance(step, (ComputeSuperstep, ExchangeSuperstep)):
            exchange = step.exchange
            if isinstance(step, ComputeSuperstep):
                tile_cycles = step.compute_set.cycles
                self._check_per_tile(tile_cycles, f"compute set {step.compute_set.name!r}")
                compute, kind = self._per_ipu(tile_cycles.max(axis=-1), "compute"), "compute"
            else:
                tile_cycles, compute, kind = None, zeros, "exchange"
            exchange_cycles = zeros
            if exchange is not None:
                self._check_per_tile(exchange.received, f"exchange {exchange.name!r} of step {step.label!r}")
                h = self._per_ipu(exchange.max_h(), "exchange")
                exchange_cycles = ceil_div(h, spec.exchange_bytes_per_cycle)
            one_ipu = self.ipus == 1 or self._only_ipu is not None
            sync = step.sync or (SyncKind.ON_CHIP if one_ipu else SyncKind.CROSS_IPU)
            return compute, self._sync(compute + exchange_cycles, sync), exchange_cycles, kind, tile_cycles
        if isinstance(step, (HostToDevice, DeviceToHost)):
            nbytes = self._per_ipu(step.nbytes, f"stream {step.label!r}")
            # every IPU the stream feeds streams at once, sharing its machine's host link and the host's staging
            streaming = max(1, int(np.count_nonzero(nbytes)))
            link = self._transfer_cycles(nbytes, HOST.stream_bytes_per_s(spec, streaming), spec.host_link_latency_s)
            kind = "host->device" if isinstance(step, HostToDevice) else "device->host"
            return zeros, self._sync(link, SyncKind.HOST), link, kind, None
        if isinstance(step, HostCall):
            # the front end's seconds per execution hold the host sync of one IPU; more IPUs add the sync's growth
            growth = HOST.sync_cycles(spec, self.ipus) - HOST.sync_cycles(spec, 1)
            call = self._zeros + spec.seconds_to_cycles(HOST.execution_seconds(step.api)) + growth
            return zeros, call, zeros, "host call", None
        if isinstance(step, HostWait):
            return zeros, self._zeros + spec.seconds_to_cycles(step.seconds), zeros, "host wait", None
        if isinstance(step, StreamingMemoryCopy):
            nbytes = self._per_ipu(step.nbytes, f"Streaming Memory copy {step.label!r}")
            link = self._transfer_cycles(nbytes, spec.host_link_bytes_per_s, spec.host_link_latency_s)
            return zeros, self._sync(link, SyncKind.ON_CHIP), link, STREAMING_MEMORY, None
        if isinstance(step, IPULinkCopy):
            nbytes = self._per_ipu(step.nbytes, f"IPU-Link copy {step.label!r}")
            links = step.links or spec.ipu_links
            bandwidth = spec.ipu_link_bytes_per_s * min(links, spec.ipu_links) / spec.ipu_links
            link = self._transfer_cycles(nbytes, bandwidth, spec.ipu_link_latency_s)
            return zeros, self._sync(link, SyncKind.CROSS_IPU), link, "ipu-link", None
        raise GraphError(
            f"the bsp CostEngine cannot run a {type(step).__name__} ({step.label!r}); "
            "Poplar-like programs run with bsp.poplar.Engine"
        )

    def _transfer_cycles(self, nbytes, bytes_per_s, latency_s):
        """Cycles per IPU to move ``nbytes`` over a link: latency plus bytes over bandwidth; nothing if no bytes."""
        cycles = ceil_div(nbytes * self.spec.clock_hz, bytes_per_s).astype(np.int64)
        return np.where(nbytes > 0, cycles + self.spec.seconds_to_cycles(latency_s), 0)

    def _sync(self, busy, sync):
        """Sync cycles per IPU; a global sync adds each IPU's wait for the slowest one's ``busy`` cycles."""
        sync_cycles = np.full(self.ipus, sync.cycles(self.spec, self.ipus), dtype=np.int64)
        return sync_cycles + (busy.max() - busy) if sync.is_global else sync_cycles

    def _make_timeline(self):
        rows = len(self._labels)
        stacked = [
            np.array([cost[i] for cost in self._costs], dtype=np.int64).reshape(rows, self.ipus) for i in range(3)
        ]
        return Timeline(
            spec=self.spec,
            labels=tuple(self._labels),
            kinds=tuple(self._kinds),
            counts=np.array(self._counts, dtype=np.int64),
            compute=stacked[0],
            sync=stacked[1],
            exchange=stacked[2],
            schedule=self._schedule,
            row_tile_cycles=tuple(self._tile_cycles),
            moved_bytes=np.array(self._moved, dtype=np.int64).reshape(rows, self.ipus),
        )


def _check_cycles(cycles, what, spec):
    """A GraphError naming ``what`` if it would run more cycles than a timeline counts (CYCLE_LIMIT)."""
    most = max(cycles, default=0)
    if most > CYCLE_LIMIT:
        years = most / spec.clock_hz / (365.25 * 24 * 3600)
        raise GraphError(
            f"{what} would run {most:.3g} cycles ({years:.3g} years simulated), more than the "
            f"{CYCLE_LIMIT:,} cycles the engine counts; use a smaller count"
        )
