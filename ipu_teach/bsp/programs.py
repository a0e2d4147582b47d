"""Programs: the control flow the Engine runs, a tree of supersteps.

Leaves are supersteps (``ComputeSuperstep``: sync, exchange, compute; ``ExchangeSuperstep``: sync and exchange
only; host streams, IPU-Link copies); ``Sequence`` and ``Repeat`` arrange them, and ``Parallel`` gives each IPU its own
program (a pipeline's stages). ``Repeat(n, body)`` is costed once and
counted n times, so a loop of thousands of identical steps costs the host no more than one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..hardware import HOST_APIS
from .compute import CostedComputeSet
from .errors import GraphError
from .exchange import Exchange
from .sync import SyncKind


class Program:
    """Base of every program node. ``label`` names the step in timelines and traces."""

    label = "program"


def _check_label(label):
    if not isinstance(label, str):
        raise GraphError(f"a program label must be a string, got {label!r}")


@dataclass(frozen=True, eq=False)
class ComputeSuperstep(Program):
    """A program of one superstep: sync, exchange the compute set's inputs, then compute (``bsp.poplar.Execute``,
    Poplar's name, is lowered to one; this was ``bsp.Execute`` before 2026-11).

    The bulk-synchronous step of the IPU: every tile waits at the sync, then data moves between tiles,
    then every tile computes on its own memory. Its cost is the sync plus the busiest tile's exchange
    plus the busiest tile's compute.

    Args:
      compute_set: A ``bsp.CostedComputeSet``, the cycles of each tile.
      exchange: Optional ``bsp.Exchange``, the bytes each tile receives first. Default: None, no exchange.
      sync: The kind of sync. Default: None, on-chip for one IPU and cross-IPU for several.

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp, hardware
    >>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("matmul", np.full(4, 2_000)),
    ...                             exchange=bsp.Exchange(received=np.full(4, 1_024)))
    >>> bsp.CostEngine(step, hardware.MK2.with_tiles(4)).run().totals()
    {'compute': 2000, 'sync': 150, 'exchange': 256}
    """

    compute_set: CostedComputeSet
    exchange: Exchange = None
    sync: SyncKind = None

    def __post_init__(self):
        if not isinstance(self.compute_set, CostedComputeSet):
            raise GraphError(f"ComputeSuperstep needs a bsp.CostedComputeSet, got {type(self.compute_set).__name__}")
        if self.exchange is not None and not isinstance(self.exchange, Exchange):
            raise GraphError(f"ComputeSuperstep({self.compute_set.name!r}): exchange must be a bsp.Exchange")

    @property
    def label(self):
        return self.compute_set.name


@dataclass(frozen=True, eq=False)
class ExchangeSuperstep(Program):
    """An exchange-only superstep (sync, then move bytes between tiles; no compute). ``bsp.poplar.Copy``, Poplar's
    name, is lowered to one; this was ``bsp.Copy`` before 2026-11."""

    exchange: Exchange
    sync: SyncKind = None

    def __post_init__(self):
        if not isinstance(self.exchange, Exchange):
            raise GraphError(f"ExchangeSuperstep needs a bsp.Exchange, got {type(self.exchange).__name__}")

    @property
    def label(self):
        return self.exchange.name


def _as_link_bytes(nbytes, what):
    array = np.asarray(nbytes)
    if array.dtype.kind not in "iu" or array.ndim > 1 or (array < 0).any():
        raise GraphError(f"{what}: bytes must be a non-negative integer or one per IPU, got {nbytes!r}")
    return array.astype(np.int64)


@dataclass(frozen=True, eq=False)
class _HostStream(Program):
    """A stream of ``nbytes`` (a number, or one per IPU) over PCIe, after a host sync; the subclass says which way."""

    nbytes: object
    label: str = "host stream"

    def __post_init__(self):
        _check_label(self.label)
        object.__setattr__(self, "nbytes", _as_link_bytes(self.nbytes, f"stream {self.label!r}"))


@dataclass(frozen=True, eq=False)
class HostToDevice(_HostStream):
    """A program that streams ``nbytes`` from the host to the device, after a host sync.

    The cost of feeding a batch: a sync with the host, then the transfer over the host link (PCIe,
    shared by the IPUs of a machine that stream at the same time).

    Args:
      nbytes: Integer, the bytes streamed (or one integer per IPU).
      label: The step's name in timelines. Default: ``"host->device"``.

    Example:

    >>> from ipu_teach import bsp, hardware
    >>> bsp.CostEngine(bsp.HostToDevice(4096), hardware.MK2.with_tiles(4)).run().totals()
    {'compute': 0, 'sync': 13000, 'exchange': 7430}
    """

    label: str = "host->device"


@dataclass(frozen=True, eq=False)
class DeviceToHost(_HostStream):
    """A program that streams ``nbytes`` from the device to the host, after a host sync.

    The way back of ``HostToDevice`` (results, outfeeds), with the same arguments; its ``label`` defaults to
    ``"device->host"``.

    Example:

    >>> from ipu_teach import bsp, hardware
    >>> round_trip = bsp.Sequence(bsp.HostToDevice(4096), bsp.DeviceToHost(1024))
    >>> print(bsp.CostEngine(round_trip, hardware.MK2.with_tiles(4)).run().summary())
    superstep                      runs   compute    sync  exchange    cycles
    host->device                      1         0   13000      7430     20430
    device->host                      1         0   13000      6846     19846
    total: 40,276 cycles = 30.283 us simulated on GC200 (Mk2) (4 tiles); compute 0, sync 26,000, exchange 14,276;
    tile utilisation 0.0%
    """

    label: str = "device->host"


@dataclass(frozen=True, eq=False)
class HostCall(Program):
    """The host's call of one execution from a front end (``api``: one of ``hardware.HOST_APIS``), after which
    the device runs the program; the IPUs wait at a host sync while the framework launches it.

    Its cost is the front end's seconds per execution, which hold the host sync of one IPU, plus the growth of that
    sync when the program spans more IPUs (``hardware.HostSpec``).

    Args:
      api: The front end that calls the program: ``"keras"``, ``"custom_loop"`` or ``"poptorch"``. Default: ``"keras"``.
      label: The step's name in timelines. Default: ``"host call"``.

    Example:

    >>> from ipu_teach import bsp, hardware
    >>> round(bsp.CostEngine(bsp.HostCall("keras"), hardware.MK2).run().seconds() * 1e3, 2)
    2.83
    """

    api: str = "keras"
    label: str = "host call"

    def __post_init__(self):
        _check_label(self.label)
        if self.api not in HOST_APIS:
            raise GraphError(f"HostCall: api {self.api!r} is not one of {HOST_APIS}")


@dataclass(frozen=True, eq=False)
class HostWait(Program):
    """The device waiting ``seconds`` for a late host before a stream can start (PopVision's ``StreamCopyBegin``):
    the input pipeline has not produced the next batch yet.

    Args:
      seconds: Non-negative number, how long every IPU waits.
      label: The step's name in timelines. Default: ``"StreamCopyBegin (host late)"``.

    Example:

    >>> from ipu_teach import bsp, hardware
    >>> bsp.CostEngine(bsp.HostWait(1e-6), hardware.MK2).run().totals()
    {'compute': 0, 'sync': 1330, 'exchange': 0}
    """

    seconds: float
    label: str = "StreamCopyBegin (host late)"

    def __post_init__(self):
        _check_label(self.label)
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, (int, float)) or not self.seconds >= 0:
            raise GraphError(f"HostWait {self.label!r}: seconds must be a number >= 0, got {self.seconds!r}")


@dataclass(frozen=True, eq=False)
class StreamingMemoryCopy(Program):
    """Each IPU copies ``nbytes`` (a number, or one per IPU) between its tiles and its Streaming Memory.

    Streaming Memory (Poplar's remote buffers) is the DRAM of the IPU-Machine's gateway, which each IPU reaches
    over its own PCIe link (the workshop slides' machine diagram: x8 PCIe G4, 128 GB Streaming Memory DRAM):
    no host sync and no shared host link, so IPUs copy at the same time, inside a ``Parallel`` block too.

    Example:

    >>> from ipu_teach import bsp, hardware
    >>> bsp.CostEngine(bsp.StreamingMemoryCopy(4096), hardware.MK2.with_tiles(4)).run().totals()
    {'compute': 0, 'sync': 150, 'exchange': 6992}
    """

    nbytes: object
    label: str = "streaming memory copy"

    def __post_init__(self):
        _check_label(self.label)
        object.__setattr__(self, "nbytes", _as_link_bytes(self.nbytes, f"Streaming Memory copy {self.label!r}"))


@dataclass(frozen=True, eq=False)
class IPULinkCopy(Program):
    """Each IPU sends ``nbytes`` (a number, or one per IPU) over ``links`` of its IPU-Links (None: all)."""

    nbytes: object
    links: int = None
    label: str = "ipu-link copy"

    def __post_init__(self):
        _check_label(self.label)
        object.__setattr__(self, "nbytes", _as_link_bytes(self.nbytes, f"IPU-Link copy {self.label!r}"))
        if self.links is not None and (not isinstance(self.links, int) or self.links <= 0):
            raise GraphError(f"IPU-Link copy {self.label!r}: links must be a positive integer, got {self.links!r}")


def _check_programs(programs, what):
    for child in programs:
        if not isinstance(child, Program):
            raise GraphError(f"{what}: expected programs, got {type(child).__name__} ({child!r:.60})")


class _ProgramGroup(Program):
    """Programs given as arguments or as one list, checked and kept in order (a Sequence's or a Parallel's)."""

    def __init__(self, programs, label):
        if len(programs) == 1 and isinstance(programs[0], (list, tuple)):
            programs = tuple(programs[0])
        _check_programs(programs, f"{type(self).__name__} {label!r}")
        _check_label(label)
        self.programs, self.label = tuple(programs), label

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(map(repr, self.programs))})"


class Sequence(_ProgramGroup):
    """A program that runs programs one after another: ``Sequence(a, b)`` or ``Sequence([a, b])``.

    Args:
      *programs: The programs, or one list of them.
      label: The sequence's name. Default: ``"sequence"``.

    Raises:
      GraphError: if an argument is not a program.

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp, hardware
    >>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("matmul", np.full(4, 2_000)),
    ...                             exchange=bsp.Exchange(received=np.full(4, 1_024)))
    >>> program = bsp.Sequence(bsp.HostToDevice(4096), step, bsp.DeviceToHost(1024))
    >>> bsp.CostEngine(program, hardware.MK2.with_tiles(4)).run().labels
    ('host->device', 'matmul', 'device->host')
    """

    def __init__(self, *programs, label: str = "sequence"):
        super().__init__(programs, label)


class Repeat(Program):
    """A program that runs ``body`` ``count`` times (``poplar::program::Repeat``).

    A device-side loop: no host involvement between iterations, which is what ``steps_per_execution``
    buys a Keras model on the IPU.

    Args:
      count: Integer >= 0, how many times to run ``body``.
      body: The program to repeat.
      label: The loop's name. Default: ``"repeat"``.

    Raises:
      GraphError: for a negative or non-integer count, or a body that is not a program.

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp, hardware
    >>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("matmul", np.full(4, 2_000)),
    ...                             exchange=bsp.Exchange(received=np.full(4, 1_024)))
    >>> timeline = bsp.CostEngine(bsp.Repeat(10, step), hardware.MK2.with_tiles(4)).run()
    >>> timeline.labels, timeline.counts.tolist(), timeline.totals()["compute"]
    (('matmul',), [10], 20000)
    """

    def __init__(self, count: int, body: Program, label: str = "repeat"):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise GraphError(f"Repeat {label!r}: count must be a non-negative integer, got {count!r}")
        _check_programs([body], f"Repeat {label!r}")
        _check_label(label)
        self.count, self.body, self.label = int(count), body, label

    def __repr__(self):
        return f"Repeat({self.count}, {self.body!r})"


class Parallel(_ProgramGroup):
    """A program in which IPU ``i`` runs ``programs[i]`` while the others run theirs, then every IPU waits
    for the slowest at a cross-IPU sync: one slot of a lock-step pipeline, each IPU running its stage.

    The IPUs' programs hold on-chip supersteps (``ComputeSuperstep``, ``ExchangeSuperstep``, nested
    ``Sequence``/``Repeat``); host streams and IPU-Link copies involve several IPUs and go between ``Parallel`` blocks.

    Args:
      *programs: One program per IPU of the Engine, or one list of them.
      label: The block's name; its closing sync is named ``label + "/sync"``. Default: ``"parallel"``.

    Raises:
      GraphError: if an argument is not a program.

    Example:

    >>> import numpy as np
    >>> from ipu_teach import bsp, hardware
    >>> spec = hardware.MK2.with_tiles(4)
    >>> slow, fast = (
    ...     bsp.ComputeSuperstep(bsp.CostedComputeSet(name, np.full(4, n)))
    ...     for name, n in (("slow", 900), ("fast", 100))
    ... )
    >>> timeline = bsp.CostEngine(bsp.Parallel(slow, fast), spec, ipus=2).run()
    >>> timeline.labels, timeline.ipu_cycles().tolist()
    (('slow', 'fast', 'parallel/sync'), [2550, 2550])
    """

    def __init__(self, *programs, label: str = "parallel"):
        super().__init__(programs, label)
