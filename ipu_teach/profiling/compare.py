"""Two reports side by side, as PopVision's report comparison: source, target and the difference."""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware import CODE_CATEGORIES
from .report import Report


@dataclass(frozen=True)
class Row:
    name: str
    source: float
    target: float

    @property
    def difference(self) -> float:
        return self.target - self.source


def comparison_rows(source: Report, target: Report) -> list:
    """Memory (all IPUs): the total, by PopVision category and by tensor role; the fullest tile, the live peak,
    cycles by phase, utilisation."""

    def summed(report, table, category):
        sums = getattr(report.compilation, table).get(category)
        return int(sums.sum()) if sums is not None else 0

    def total(report):
        c = report.compilation
        return sum(int(c.tile_memory(ipu).sum()) for ipu in range(c.target.numIPUs))

    def fullest(report):
        c = report.compilation
        return max(int(c.tile_memory(ipu).max(initial=0)) for ipu in range(c.target.numIPUs))

    def peak(report):
        c = report.compilation
        return max((p.totalBytes for p in (c.live_peak(i) for i in range(c.target.numIPUs)) if p), default=0)

    def union(table, keep=lambda c: True):
        names = [c for r in (source, target) for c in getattr(r.compilation, table) if keep(c)]
        return list(dict.fromkeys(names))

    rows = [Row("memory: total (bytes)", total(source), total(target))]
    rows += [
        Row(f"memory: {c} (bytes)", *(summed(r, "memory_by_popvision_category", c) for r in (source, target)))
        for c in union("memory_by_popvision_category")
    ]
    rows += [
        Row(f"memory: role {c} (bytes)", *(summed(r, "memory_by_category", c) for r in (source, target)))
        for c in union("memory_by_category", lambda c: c not in CODE_CATEGORIES)
    ]
    rows += [
        Row("memory: fullest tile (bytes)", fullest(source), fullest(target)),
        Row(
            "memory: tiles out of memory",
            *(
                sum(len(r.compilation.out_of_memory_tiles(i)) for i in range(r.compilation.target.numIPUs))
                for r in (source, target)
            ),
        ),
        Row("liveness: live peak (bytes)", peak(source), peak(target)),
        Row("execution: cycles", source.execution.total_cycles(), target.execution.total_cycles()),
    ]
    rows += [
        Row(f"execution: {name} cycles", source.execution.totals()[name], target.execution.totals()[name])
        for name in ("compute", "sync", "exchange")
    ]
    rows.append(
        Row(
            "execution: tile utilisation (%)",
            100 * source.execution.utilisation(),
            100 * target.execution.utilisation(),
        )
    )
    return rows


def compare_reports(source: Report, target: Report) -> str:
    """Returns a text table comparing two reports: one row per figure, the source, the target and the difference.

    Like PopVision's comparison of two reports: memory by PopVision category and by tensor role, the fullest
    tile, the live peak and
    the execution's cycles, to see what a change (batch size, tiles, options) did.

    Args:
      source: The ``Report`` to compare from.
      target: The ``Report`` to compare to.

    Returns:
      The table, a string.

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> print(profiling.compare_reports(report, report))
                                                         source          target      difference
                                                sequential_trai sequential_trai
    memory: total (bytes)                                70,962          70,962               0
    ...
    execution: tile utilisation (%)                         2.1             2.1             0.0
    """
    rows = comparison_rows(source, target)
    width = max(len(r.name) for r in rows) + 2
    lines = [
        f"{'':<{width}}{'source':>16}{'target':>16}{'difference':>16}",
        f"{'':<{width}}{source.name[:15]:>16}{target.name[:15]:>16}",
    ]
    for r in rows:
        fmt = (lambda v: f"{v:,.1f}") if "%" in r.name else (lambda v: f"{int(v):,}")
        sign = "+" if r.difference > 0 else ""
        lines.append(f"{r.name:<{width}}{fmt(r.source):>16}{fmt(r.target):>16}{sign + fmt(r.difference):>16}")
    return "\n".join(lines)
