"""A text summary of a report, in the spirit of Poplar's ``printProfileSummary``."""

from __future__ import annotations

import numpy as np

from ..hardware import CODE_CATEGORIES
from .report import Report

KIB = 1024


def _bytes(n: int) -> str:
    n = int(n)
    if abs(n) >= KIB * KIB:
        return f"{n / KIB / KIB:,.2f} MiB"
    if abs(n) >= KIB:
        return f"{n / KIB:,.1f} KiB"
    return f"{n:,} B"


def profile_summary(report: Report, top: int = 5) -> str:
    """Target, memory (by PopVision category and by role, the fullest tiles, the live peak) and execution
    (cycles, balance)."""
    c, e, t = report.compilation, report.execution, report.compilation.target
    lines = [
        f"Report of `{report.model}` ({report.mode}), executable {report.executable[:8]} (simulated)",
        "Target:",
        f"  {t.name}: {t.numIPUs} IPU(s) x {t.tilesPerIPU:,} tiles = {t.numTiles:,} tiles, "
        f"{_bytes(t.bytesPerTile)} per tile, {t.clockFrequency / 1e9:.2f} GHz, {t.numReplicas} replica(s)",
        "Memory:",
    ]
    for ipu in range(t.numIPUs):
        memory = c.tile_memory(ipu)
        fullest = int(np.argmax(memory))
        lines.append(
            f"  IPU {ipu}: total {_bytes(memory.sum())} of {_bytes(t.bytesPerTile * t.tilesPerIPU)}; "
            f"fullest tile {fullest} with {_bytes(memory[fullest])} ({memory[fullest] / t.bytesPerTile:.1%} "
            f"of its SRAM); {len(c.out_of_memory_tiles(ipu))} tile(s) out of memory"
        )
        lines.append("    by PopVision category (what the tiles hold):")
        for category, sums in c.memory_by_popvision_category.items():
            lines.append(f"      {category:<26}{_bytes(sums[ipu].sum()):>14}")
        lines.append("    tensors by role (each whole: not-always-live tensors share memory):")
        for category, sums in c.memory_by_category.items():
            if category not in CODE_CATEGORIES:
                lines.append(f"      {category:<26}{_bytes(sums[ipu].sum()):>14}")
        peak = c.live_peak(ipu)
        if peak is not None:
            lines.append(
                f"    live peak {_bytes(peak.totalBytes)} at step {peak.index} `{peak.name}` "
                f"({_bytes(peak.notAlwaysLiveBytes)} not always live)"
            )
        largest = sorted((v for v in c.variables if v.ipu == ipu), key=lambda v: -v.size)[:top]
        lines.append("    largest: " + ", ".join(f"{v.name} {_bytes(v.size)}" for v in largest))
    totals = e.totals()
    total = e.total_cycles()
    lines += [
        "Execution (one execution):",
        f"  {total:,} cycles = {total / e.clockFrequency * 1e6:,.1f} us simulated; "
        + ", ".join(f"{name} {cycles:,} ({cycles / total if total else 0:.1%})" for name, cycles in totals.items()),
        f"  tile utilisation {e.utilisation():.1%}, tile balance {e.tile_balance(0):.1%} (IPU 0)",
    ]
    busiest = sorted(e.steps, key=lambda s: -s.count * max(i.cycles for i in s.ipus))[:top]
    for step in busiest:
        cycles = step.count * max(i.cycles for i in step.ipus)
        lines.append(
            f"  {step.name[:40]:<41}{step.count:>5} x {cycles // max(step.count, 1):>9,} = {cycles:>11,} cycles"
        )
    return "\n".join(lines)


def print_profile_summary(report: Report, top: int = 5) -> None:
    """Prints a text summary of a report: the target, memory by category per IPU and the execution.

    The headline figures PopVision's summary and memory report show, in one printout: where the memory
    goes, the fullest tile, the live peak, and the costliest steps of one execution.

    Args:
      report: A ``Report``.
      top: Integer, how many of the largest variables and costliest steps to list. Default: 5.

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> profiling.print_profile_summary(report, top=2)
    Report of `sequential` (train), executable ... (simulated)
    Target:
      GC200 (Mk2) (16 tiles): 1 IPU(s) x 16 tiles = 16 tiles, 624.0 KiB per tile, 1.33 GHz, 1 replica(s)
    Memory:
    ...
    Execution (one execution):
      96,680 cycles = 72.7 us simulated; compute 11,006 (11.4%), sync 58,900 (60.9%), exchange 26,774 (27.7%)
    ...
    """
    print(profile_summary(report, top))
