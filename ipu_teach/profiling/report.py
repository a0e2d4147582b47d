"""The report model: what PopVision's Graph Analyser shows, as plain data with libpva-like names.

A ``Report`` has a ``compilation`` part (the target, every variable and code category mapped to
tiles, the program steps, the compute sets, the program tree) and an ``execution`` part (the BSP
steps of one execution, cycles per IPU split into compute / sync / exchange, per-tile busy cycles).
Everything else, such as the memory of one tile or the bytes live at one program step, is derived
from those on demand, so a report saved as JSON and opened again answers the same questions.
Names follow libpva (``report.compilation.target.numTiles``, ``tiles[i].memory.total.includingGaps``,
``report.execution.steps``, ``step.ipus[0].cycles``) so the habits carry over to the real tools.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..bsp import allocated_per_tile
from ..hardware import CODE_CATEGORIES, NOT_ALWAYS_LIVE_VARIABLES, POPVISION_CATEGORIES, popvision_category


@dataclass(frozen=True)
class Target:
    """The IPUs one replica of the program is compiled for (``numTiles`` counts every tile of them)."""

    name: str
    numIPUs: int
    numReplicas: int
    tilesPerIPU: int
    bytesPerTile: int
    clockFrequency: float

    @property
    def numTiles(self) -> int:
        """The number of tiles of the target: IPUs times tiles per IPU (PopVision's name).

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.compilation.target.numTiles
        16
        """
        return self.numIPUs * self.tilesPerIPU

    @property
    def totalMemory(self) -> int:
        return self.numTiles * self.bytesPerTile


@dataclass(frozen=True, eq=False)
class Variable:
    """One tensor or code category: bytes on each tile of its IPU. A not-always-live variable is live
    from program step ``liveFrom`` to ``liveUntil`` of its IPU (both included)."""

    name: str
    category: str
    ipu: int
    perTile: np.ndarray
    alwaysLive: bool = True
    liveFrom: int = 0
    liveUntil: int = -1

    @property
    def size(self) -> int:
        return int(self.perTile.sum())

    def live_at(self, step: int) -> bool:
        return self.alwaysLive or self.liveFrom <= step <= self.liveUntil


@dataclass(frozen=True)
class MemorySize:
    """The simulated allocator packs tensors without gaps, so both figures are the same: always-live bytes plus
    the peak of the not-always-live ones (tensors never live together share memory)."""

    includingGaps: int
    excludingGaps: int


@dataclass(frozen=True)
class TileMemory:
    """One tile's memory. ``byCategory``: bytes by role (weights, activations, ..., code), every tensor counted
    whole, so with tensors that share memory they add up to more than the total; ``byPopVisionCategory``:
    PopVision's categories (always-live and not-always-live variables, code), which add up to the total.
    ``notAlwaysLiveBytes`` is the not-always-live tensors' peak: the memory they share."""

    total: MemorySize
    byCategory: dict
    alwaysLiveBytes: int
    notAlwaysLiveBytes: int
    overflow: int
    byPopVisionCategory: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Tile:
    """One tile of the target: its number over all IPUs, its IPU and index on that IPU, and its memory."""

    number: int
    ipu: int
    tileOnIPU: int
    memory: TileMemory


@dataclass(frozen=True)
class ComputeSet:
    """One compute set: the IPU it runs on, its FLOPs, how many tiles and vertices it uses."""

    name: str
    ipu: int
    phase: str
    flops: int
    activeTiles: int
    vertices: int
    maxTileCycles: int
    bytesReceived: int


@dataclass(frozen=True)
class LivenessStep:
    """Bytes live on an IPU (or one tile) during one program step, and the not-always-live variables."""

    index: int
    name: str
    alwaysLiveBytes: int
    notAlwaysLiveBytes: int
    notAlwaysLiveVariables: tuple

    @property
    def totalBytes(self) -> int:
        return self.alwaysLiveBytes + self.notAlwaysLiveBytes


@dataclass(frozen=True)
class Program:
    """A node of the program tree: a Sequence or Repeat with children, or a step of the execution."""

    type: str
    name: str
    count: int = 1
    children: tuple = ()

    def accept(self, visitor: "ProgramVisitor"):
        return getattr(visitor, f"visit{self.type}", visitor.visitProgram)(self)


class ProgramVisitor:
    """Subclass and override ``visitOnTileExecute``, ``visitStreamCopy``, ``visitIPULinkCopy``,
    ``visitDoExchange``, ``visitRepeat`` or ``visitSequence`` (as with libpva); the default walks the tree."""

    def visitProgram(self, program: Program):
        for child in program.children:
            child.accept(self)

    visitSequence = visitRepeat = visitProgram


@dataclass
class Compilation:
    target: Target
    variables: list
    programSteps: list
    """``programSteps[ipu]``: the names of the program steps of that IPU, in program order."""
    computeSets: list
    program: Program
    tileTotals: np.ndarray
    """(numIPUs, tilesPerIPU) bytes the compiler allocated on each tile (kept to check ours). A version 1 report,
    written before tensors shared memory, holds the sum of every variable here; its other figures are derived
    again from its variables, so it opens with today's totals."""

    @functools.cached_property
    def categories(self) -> tuple:
        """The memory categories present, tensors first, then code in PopVision's order."""
        present = {v.category for v in self.variables}
        tensors = sorted(present - set(CODE_CATEGORIES), key=lambda c: [v.category for v in self.variables].index(c))
        return tuple(tensors) + tuple(c for c in CODE_CATEGORIES if c in present)

    @functools.cached_property
    def memory_by_category(self) -> dict:
        """``{category: (numIPUs, tilesPerIPU) int64 bytes}``."""
        shape = (self.target.numIPUs, self.target.tilesPerIPU)
        sums = {c: np.zeros(shape, dtype=np.int64) for c in self.categories}
        for v in self.variables:
            sums[v.category][v.ipu] += v.perTile
        return sums

    @functools.cached_property
    def memory_by_popvision_category(self) -> dict:
        """``{PopVision category: (numIPUs, tilesPerIPU) int64 bytes}``, in PopVision's order: always-live
        variables, not-always-live variables (the most they need at once on each tile), then code. Their sum
        on a tile is what the tile needs (``tile_memory``).

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> list(report.compilation.memory_by_popvision_category)[:3]
        ['always-live variables', 'not-always-live variables', 'vertex code']
        """
        shape = (self.target.numIPUs, self.target.tilesPerIPU)
        sums = {c: np.zeros(shape, dtype=np.int64) for c in POPVISION_CATEGORIES}
        for v in self.variables:
            if v.alwaysLive:
                sums[popvision_category(v.category, True)][v.ipu] += v.perTile
        for ipu in range(self.target.numIPUs):
            live = [(v.perTile, v.liveFrom, v.liveUntil) for v in self.variables if v.ipu == ipu and not v.alwaysLive]
            steps = len(self.programSteps[ipu])
            sums[NOT_ALWAYS_LIVE_VARIABLES][ipu] = allocated_per_tile(np.zeros(shape[1], np.int64), live, steps)
        return {c: v for c, v in sums.items() if v.any() or c in self.categories}

    @functools.cached_property
    def always_live_memory(self) -> np.ndarray:
        """(numIPUs, tilesPerIPU) bytes of the always-live variables and code."""
        live = np.zeros((self.target.numIPUs, self.target.tilesPerIPU), dtype=np.int64)
        for v in self.variables:
            if v.alwaysLive:
                live[v.ipu] += v.perTile
        return live

    def tile_memory(self, ipu: int = 0) -> np.ndarray:
        """Returns the bytes each tile of IPU ``ipu`` needs: its always-live bytes plus the peak of its
        not-always-live ones (the sum over PopVision's categories; tensors never live together share memory).

        The fullest tile decides whether a model fits: every tile has the same SRAM.

        Args:
          ipu: Integer, the IPU. Default: 0.

        Returns:
          An int array of shape ``(tiles per IPU,)``.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> memory = report.compilation.tile_memory(0)
        >>> memory.shape, int(memory.argmax())
        ((16,), 2)
        """
        self._check_ipu(ipu)
        return sum(sums[ipu] for sums in self.memory_by_popvision_category.values())

    @property
    def tiles(self) -> list:
        """Every tile of the target (IPU 0's tiles first), each with its memory by role and by PopVision category.

        Each ``Tile`` has PopVision's fields: ``memory.total.includingGaps``, ``memory.byCategory`` (by role),
        ``memory.byPopVisionCategory``, ``memory.overflow``.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> tiles = report.compilation.tiles
        >>> len(tiles), int(tiles[0].memory.total.includingGaps) == int(report.compilation.tile_memory(0)[0])
        (16, True)
        """
        return [self.tile(number) for number in range(self.target.numTiles)]

    def tile(self, number: int) -> Tile:
        """Returns one tile and its memory, as PopVision's tile view shows it: by role, by PopVision category
        (which add up to the tile's total), always-live and not-always-live bytes, and the overflow.

        Args:
          number: Integer, the tile's number over all IPUs (IPU ``i``'s tile ``t`` is ``i * tilesPerIPU + t``).

        Raises:
          IndexError: for a tile the target does not have.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> memory = report.compilation.tile(0).memory
        >>> sum(memory.byPopVisionCategory.values()) == memory.total.includingGaps, memory.overflow
        (True, 0)
        """
        if not 0 <= number < self.target.numTiles:
            raise IndexError(f"tile {number} does not exist: the target has {self.target.numTiles} tiles")
        ipu, t = divmod(number, self.target.tilesPerIPU)
        by_category = {c: int(sums[ipu, t]) for c, sums in self.memory_by_category.items()}
        by_popvision = {c: int(sums[ipu, t]) for c, sums in self.memory_by_popvision_category.items()}
        total = sum(by_popvision.values())
        always = int(self.always_live_memory[ipu, t])
        return Tile(
            number,
            ipu,
            t,
            TileMemory(
                MemorySize(total, total),
                by_category,
                always,
                total - always,
                max(0, total - self.target.bytesPerTile),
                by_popvision,
            ),
        )

    def tile_variables(self, ipu: int, tile: int) -> list:
        """Returns the variables on one tile, largest first: ``[(name, category, bytes)]`` (PopVision's Variables tab).

        Args:
          ipu: Integer, the IPU.
          tile: Integer, the tile of that IPU.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.compilation.tile_variables(0, 0)[:2]
        [('vertexCode', 'vertex code', 3648), ('controlCode', 'control code', 780)]
        """
        self._check_ipu(ipu)
        found = [(v.name, v.category, int(v.perTile[tile])) for v in self.variables if v.ipu == ipu and v.perTile[tile]]
        return sorted(found, key=lambda item: -item[2])

    def out_of_memory_tiles(self, ipu: int = 0) -> np.ndarray:
        """Returns the indices of the tiles of IPU ``ipu`` that need more than their SRAM.

        Empty for a model that fits; a report written with ``allow_out_of_memory`` shows where it overflows.

        Args:
          ipu: Integer, the IPU. Default: 0.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.compilation.out_of_memory_tiles(0).tolist()
        []
        """
        return np.flatnonzero(self.tile_memory(ipu) > self.target.bytesPerTile)

    def liveness(self, ipu: int = 0, tile: int | None = None) -> list:
        """Returns one ``LivenessStep`` per program step of IPU ``ipu``: the bytes live during it (PopVision's
        liveness).

        Always-live bytes (code, weights) are there throughout; not-always-live ones (activations, gradients,
        temporaries) come and go, and their peak is what a smaller micro-batch or recomputation lowers.

        Args:
          ipu: Integer, the IPU. Default: 0.
          tile: Optional integer, one tile's bytes instead of the whole IPU's. Default: None.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> steps = report.compilation.liveness(0)
        >>> steps[0].index, steps[0].alwaysLiveBytes
        (0, 70566)
        """
        self._check_ipu(ipu)
        pick = (lambda v: v.size) if tile is None else (lambda v: int(v.perTile[tile]))
        mine = [v for v in self.variables if v.ipu == ipu]
        always = sum(pick(v) for v in mine if v.alwaysLive)
        steps = []
        for k, name in enumerate(self.programSteps[ipu]):
            live = [v for v in mine if not v.alwaysLive and v.live_at(k) and pick(v)]
            steps.append(LivenessStep(k, name, always, sum(pick(v) for v in live), tuple(v.name for v in live)))
        return steps

    def live_peak(self, ipu: int = 0, tile: int | None = None) -> LivenessStep | None:
        """Returns the program step with the most bytes live (None for a program without steps).

        Takes ``ipu`` and ``tile`` as ``liveness`` does: the peak of one IPU, or of one of its tiles.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> peak = report.compilation.live_peak(0)
        >>> peak.name, peak.totalBytes
        ('dense/MatMul:0/grad/transform', 70854)
        """
        steps = self.liveness(ipu, tile)
        return max(steps, key=lambda s: s.totalBytes) if steps else None

    def _check_ipu(self, ipu):
        if not 0 <= ipu < self.target.numIPUs:
            raise IndexError(f"IPU {ipu} does not exist: the report's target has {self.target.numIPUs} IPU(s)")


@dataclass(frozen=True)
class StepIPU:
    """One execution of a step on one IPU, in simulated cycles."""

    ipu: int
    computeCycles: int
    syncCycles: int
    exchangeCycles: int
    activeTiles: int
    tileBalance: float
    """Mean over max compute cycles of the IPU's tiles (1.0: perfectly balanced; 0 without compute)."""

    @property
    def cycles(self) -> int:
        return self.computeCycles + self.syncCycles + self.exchangeCycles


@dataclass(frozen=True)
class ExecutionStep:
    """A distinct step of the execution (a loop body appears once; ``count`` says how often it ran)."""

    name: str
    kind: str
    count: int
    ipus: tuple
    flops: int
    bytesExchanged: int

    @property
    def program(self) -> str:
        return self.name


@dataclass
class Execution:
    steps: list
    schedule: tuple
    """Nested ``(count, items)`` of step indices: the execution order, as the engine recorded it."""
    tileBusyCycles: np.ndarray
    """(ipus, tiles) compute cycles of each tile over the whole execution."""
    clockFrequency: float
    ipuName: str
    simulated: bool = True

    @property
    def numIPUs(self) -> int:
        return self.tileBusyCycles.shape[0]

    def category_array(self, category: str) -> np.ndarray:
        """(steps, ipus) cycles of one execution of each step for ``category`` (compute / sync / exchange)."""
        name = {"compute": "computeCycles", "sync": "syncCycles", "exchange": "exchangeCycles"}[category]
        return np.array([[getattr(ipu, name) for ipu in step.ipus] for step in self.steps], dtype=np.int64).reshape(
            len(self.steps), self.numIPUs
        )

    def timeline(self):
        """The execution as a ``bsp.Timeline`` (without per-tile cycles), for traces and pictures."""
        from ..bsp import Timeline

        spec = _TraceSpec(self.ipuName, self.clockFrequency, self.tileBusyCycles.shape[1])
        return Timeline(
            spec,
            tuple(s.name for s in self.steps),
            tuple(s.kind for s in self.steps),
            np.array([s.count for s in self.steps], dtype=np.int64),
            self.category_array("compute"),
            self.category_array("sync"),
            self.category_array("exchange"),
            self.schedule,
            (None,) * len(self.steps),
        )

    def total_cycles(self) -> int:
        """Returns the simulated cycles of one execution (``steps_per_execution`` steps), host transfers included.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.execution.total_cycles()
        96680
        """
        return self.timeline().total_cycles()

    def cycles_by_kind(self, ipu: int = 0) -> dict:
        """Returns where the time of one execution goes on IPU ``ipu``: cycles summed per kind of step, largest first.

        The kinds are compute, exchange, host->device, device->host, host wait and ipu-link: the breakdown
        that shows, for instance, how much of a step is host I/O.

        Args:
          ipu: Integer, the IPU. Default: 0.

        Raises:
          IndexError: for an IPU the execution did not run on.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.execution.cycles_by_kind()
        {'host->device': 39340, 'device->host': 39304, 'compute': 18036}
        """
        if not 0 <= ipu < self.numIPUs:
            raise IndexError(f"IPU {ipu} does not exist: the execution ran on {self.numIPUs} IPU(s)")
        totals = {}
        for step in self.steps:
            totals[step.kind] = totals.get(step.kind, 0) + step.count * step.ipus[ipu].cycles
        return dict(sorted(totals.items(), key=lambda item: -item[1]))

    def totals(self) -> dict:
        """Returns the cycles of one execution per superstep phase: ``{"compute", "sync", "exchange"}``.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> report.execution.totals()
        {'compute': 11006, 'sync': 58900, 'exchange': 26774}
        """
        return self.timeline().totals()

    def utilisation(self) -> float:
        """Returns the fraction of tile-cycles spent computing over the execution, between 0 and 1.

        Low for a small model: most of its time is syncs and transfers, and most tiles wait.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> round(report.execution.utilisation(), 3)
        0.021
        """
        total = self.total_cycles()
        return float(self.tileBusyCycles.sum() / (self.tileBusyCycles.size * total)) if total else 0.0

    def tile_balance(self, ipu: int = 0) -> float:
        """Returns how evenly the tiles of IPU ``ipu`` are busy: mean over max busy cycles, between 0 and 1.

        1 means every tile computes as long as the busiest; a low balance means a few tiles hold the work.

        Args:
          ipu: Integer, the IPU. Default: 0.

        Example:

        >>> from ipu_teach.examples import small_report
        >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
        >>> round(report.execution.tile_balance(0), 2)
        0.49
        """
        busy = self.tileBusyCycles[ipu]
        return float(busy.mean() / busy.max()) if busy.max(initial=0) else 0.0


@dataclass(frozen=True)
class _TraceSpec:
    """What a Timeline needs of its spec to report cycles, seconds and traces."""

    name: str
    clock_hz: float
    tiles: int


@dataclass
class Report:
    model: str
    mode: str
    executable: str
    compilation: Compilation
    execution: Execution
    options: dict = field(default_factory=dict)
    path: str | None = None

    @property
    def name(self) -> str:
        return f"{self.model}_{self.mode}_{self.executable[:8]}"
