"""The Timeline: what a run cost, superstep by superstep and IPU by IPU, as plain numpy data.

Rows are the distinct supersteps of the program in program order (a loop body appears once);
``counts[r]`` says how many times row ``r`` ran, and ``schedule`` (nested ``(count, items)``
tuples) gives the execution order, so loops of thousands of steps stay small.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np

CATEGORIES = ("compute", "sync", "exchange")
CYCLE_LIMIT = 2**63 - 1
"""The most cycles a run may take, as the timeline's int64 arrays count them: 219 years at 1.33 GHz. The
Engine refuses a program beyond it rather than let a count wrap around."""
PHASE_ORDER = ("sync", "exchange", "compute")
"""The order of the phases in time within one superstep: sync, bring inputs in, compute."""


@dataclass(frozen=True, eq=False)
class Timeline:
    """Simulated cycles of one run. ``compute``/``sync``/``exchange`` are int64 (rows, ipus) arrays of one
    execution of each row, ``counts`` (rows,) how often each row ran, ``row_tile_cycles[r]`` the compute
    set's per-tile cycles of row ``r`` ((tiles,) or (ipus, tiles); None for steps without compute).
    ``exchange`` also holds host-link and IPU-Link transfers (``kinds`` tells the steps apart), as
    PopVision counts stream copies with the exchange; ``sync`` includes waiting for slower IPUs."""

    spec: object
    labels: tuple
    kinds: tuple
    counts: np.ndarray
    compute: np.ndarray
    sync: np.ndarray
    exchange: np.ndarray
    schedule: tuple
    row_tile_cycles: tuple
    moved_bytes: np.ndarray | None = None
    """int64 (rows, ipus): the bytes each IPU sends or receives over a host stream or an IPU-Link in one
    execution of each row (0 for on-chip supersteps); None where a timeline was rebuilt without them."""

    @property
    def rows(self) -> int:
        return len(self.labels)

    @property
    def ipus(self) -> int:
        return self.compute.shape[1]

    @functools.cached_property
    def tile_busy(self) -> np.ndarray:
        """Compute cycles of every tile over the whole run, int64 (ipus, tiles); computed on first use."""
        busy = np.zeros((self.ipus, self.spec.tiles), dtype=np.int64)
        for count, cycles in zip(self.counts, self.row_tile_cycles):
            if count and cycles is not None:
                busy += int(count) * cycles.astype(np.int64)
        return busy

    def superstep_cycles(self) -> np.ndarray:
        """Cycles of one execution of each row, shape (rows,): the slowest IPU's compute + sync + exchange."""
        return (self.compute + self.sync + self.exchange).max(axis=1, initial=0)

    def ipu_cycles(self) -> np.ndarray:
        """Total cycles of each IPU over the run, shape (ipus,)."""
        return self.counts @ (self.compute + self.sync + self.exchange)

    def total_cycles(self) -> int:
        """Simulated cycles of the whole run (the busiest IPU)."""
        return int(self.ipu_cycles().max(initial=0))

    def seconds(self) -> float:
        """Simulated seconds of the run at the IPU's clock (not wall-clock time)."""
        return self.total_cycles() / self.spec.clock_hz

    def totals(self) -> dict:
        """Cycles per category (compute / sync / exchange) on the busiest IPU."""
        ipu = int(np.argmax(self.ipu_cycles())) if self.ipus else 0
        return {name: int(self.counts @ getattr(self, name)[:, ipu]) for name in CATEGORIES}

    def utilisation(self) -> float:
        """Fraction of tile-cycles spent computing: busy cycles over (tiles x IPUs x total cycles)."""
        total = self.total_cycles()
        busy = self.tile_busy.sum(dtype=np.float64)  # every tile's sum fits int64, not their total
        return float(busy / (self.tile_busy.size * total)) if total else 0.0

    @property
    def supersteps(self) -> int:
        """How many supersteps the run executes in all (loops counted out, exactly)."""
        return sum(int(count) for count in self.counts)

    def tile_cycles(self, row: int) -> np.ndarray:
        """Compute cycles of every tile in one execution of ``row``, int64 (ipus, tiles)."""
        cycles = self.row_tile_cycles[row]
        busy = np.zeros((self.ipus, self.spec.tiles), dtype=np.int64)
        return busy if cycles is None else busy + cycles

    def execution_order(self):
        """Row indices in the order they ran (loops expanded lazily; use itertools.islice on long runs).

        A loop that runs no superstep (an empty body, or a count of 0 inside) is skipped, not counted
        out: taking the first n rows costs work in proportion to n, however large the counts."""

        def expand(items):
            for item in items:
                if isinstance(item, tuple):
                    count, body = item
                    if _runs_a_superstep(body):
                        for _ in range(count):
                            yield from expand(body)
                else:
                    yield item

        return expand(self.schedule)

    def records(self) -> list:
        """One dict per row: label, kind, count, and per-IPU cycles by category (lists)."""
        return [
            {
                "label": self.labels[r],
                "kind": self.kinds[r],
                "count": int(self.counts[r]),
                **{name: getattr(self, name)[r].tolist() for name in CATEGORIES},
            }
            for r in range(self.rows)
        ]

    def summary(self) -> str:
        """Returns a short text table of the supersteps and totals, in simulated cycles.

        One row per superstep with how often it runs and its compute, sync and exchange cycles; then the
        total in cycles and simulated microseconds, and the tile utilisation (the share of tile-cycles
        spent computing).

        Example:

        >>> from ipu_teach.examples import small_timeline
        >>> timeline = small_timeline()      # 10 runs of one superstep on 4 tiles
        >>> print(timeline.summary())
        superstep                      runs   compute    sync  exchange    cycles
        matmul                           10      2000     150       256      2406
        total: 24,060 cycles = 18.090 us simulated on GC200 (Mk2) (4 tiles); compute 20,000, sync 1,500, exchange
        2,560; tile utilisation 83.1%
        """
        width = max([28] + [len(label) + 1 for label in self.labels])  # labels are never cut: stages differ at the end
        lines = [f"{'superstep':<{width}}{'runs':>7}{'compute':>10}{'sync':>8}{'exchange':>10}{'cycles':>10}"]
        once = self.superstep_cycles()
        ipu = int(np.argmax(self.ipu_cycles())) if self.ipus else 0
        for r in range(self.rows):
            lines.append(
                f"{self.labels[r]:<{width}}{self.counts[r]:>7}{self.compute[r, ipu]:>10}"
                f"{self.sync[r, ipu]:>8}{self.exchange[r, ipu]:>10}{once[r]:>10}"
            )
        totals = self.totals()
        lines.append(
            f"total: {self.total_cycles():,} cycles = {self.seconds() * 1e6:,.3f} us simulated on "
            f"{self.spec.name}; compute {totals['compute']:,}, sync {totals['sync']:,}, "
            f"exchange {totals['exchange']:,}; tile utilisation {self.utilisation():.1%}"
        )
        return "\n".join(lines)

    def first_supersteps(self, limit: int) -> list:
        """The first ``limit`` rows in execution order (for pictures of long runs)."""
        return list(itertools.islice(self.execution_order(), limit))

    def phase_intervals(self, ipu: int, limit: int) -> dict:
        """``{category: (starts, widths)}`` in simulated cycles for the first ``limit`` supersteps of ``ipu``."""
        rows = np.array(self.first_supersteps(limit), dtype=np.int64)
        widths = np.stack([getattr(self, category)[rows, ipu] for category in PHASE_ORDER], axis=1).reshape(-1)
        starts = (np.cumsum(widths) - widths).reshape(-1, len(PHASE_ORDER))
        widths = widths.reshape(-1, len(PHASE_ORDER))
        return {category: (starts[:, i], widths[:, i]) for i, category in enumerate(PHASE_ORDER)}


def _runs_a_superstep(items) -> bool:
    """Whether a schedule (rows and nested ``(count, items)``) runs at least one superstep."""
    return any(not isinstance(item, tuple) or (item[0] > 0 and _runs_a_superstep(item[1])) for item in items)
