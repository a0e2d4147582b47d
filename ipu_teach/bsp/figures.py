"""Pictures of a Timeline with matplotlib (imported only when a figure is drawn).

``plot_timeline`` draws the phases of each superstep along simulated time for one IPU, and the
occupancy of every tile (busy cycles over the run's cycles). It returns the Figure.

Example:

>>> import matplotlib.pyplot as plt
>>> from ipu_teach import bsp, hardware
>>> from ipu_teach.bsp import figures
>>> step = bsp.ComputeSuperstep(bsp.CostedComputeSet("work", [100, 50]))
>>> timeline = bsp.CostEngine(step, hardware.MK2.with_tiles(2)).run()
>>> figure = figures.plot_timeline(timeline)
>>> plt.close(figure)
"""

from __future__ import annotations

import numpy as np

from .timeline import PHASE_ORDER

COLOURS = {"sync": "tab:red", "exchange": "tab:blue", "compute": "tab:green"}
MAX_DRAWN_SUPERSTEPS = 400


def draw_phase_bars(axes, intervals) -> int:
    """One row of bars on ``axes``, a colour per phase (``Timeline.phase_intervals``); returns the last cycle drawn
    (at least 1), for the axis' limit."""
    end = 1
    for category in PHASE_ORDER:
        starts, widths = intervals[category]
        keep = widths > 0
        axes.broken_barh(list(zip(starts[keep], widths[keep])), (0, 1), color=COLOURS[category], label=category)
        end = max(end, int((starts + widths).max(initial=0)))
    return end


def plot_timeline(timeline, ipu: int = 0, max_supersteps: int = MAX_DRAWN_SUPERSTEPS, title: str = None):
    """Returns a matplotlib Figure of a Timeline: the superstep phases over simulated time, and tile occupancy.

    Top: sync, exchange and compute of each superstep of IPU ``ipu`` in turn; bottom: how many tiles
    compute at each moment. Idle tiles during compute show an unbalanced mapping.

    Args:
      timeline: A ``bsp.Timeline``.
      ipu: Integer, the IPU to draw. Default: 0.
      max_supersteps: Integer, the most supersteps drawn.
      title: Optional title.

    Returns:
      The ``matplotlib.figure.Figure``.

    Raises:
      ValueError: for an IPU the timeline does not have.

    Example:

    >>> from ipu_teach.examples import small_timeline
    >>> timeline = small_timeline()      # 10 runs of one superstep on 4 tiles
    >>> import matplotlib.pyplot as plt
    >>> from ipu_teach.bsp import figures
    >>> figure = figures.plot_timeline(timeline, title="10 steps (simulated)")
    >>> len(figure.axes)
    2
    >>> plt.close(figure)
    """
    import matplotlib.pyplot as plt

    if not 0 <= ipu < timeline.ipus:
        raise ValueError(f"plot_timeline: ipu {ipu} does not exist; the timeline has {timeline.ipus} IPU(s)")
    intervals = timeline.phase_intervals(ipu, max_supersteps)
    figure, (phases, tiles) = plt.subplots(2, 1, figsize=(9, 5), gridspec_kw={"height_ratios": [1, 2]})
    end = draw_phase_bars(phases, intervals)
    drawn = len(intervals["compute"][0])
    plural = "superstep" if drawn == 1 else "supersteps"
    shown = f" (first {drawn} {plural})" if drawn == max_supersteps else f" ({drawn} {plural})"
    phases.set(
        yticks=[],
        xlabel=f"simulated cycles{shown}",
        xlim=(0, end),
        title=title or f"BSP supersteps on IPU {ipu} of {timeline.spec.name}",
    )
    phases.legend(loc="upper right", ncol=3, fontsize="small")
    occupancy = timeline.tile_busy[ipu] / max(timeline.total_cycles(), 1)
    tiles.bar(
        np.arange(occupancy.size),
        occupancy,
        width=1.0,
        color=COLOURS["compute"],
        edgecolor="white" if occupancy.size <= 64 else "none",
        linewidth=0.5,
    )
    tiles.set(
        xlabel="tile",
        ylabel="busy fraction",
        ylim=(0, 1),
        title=f"tile occupancy: {timeline.utilisation():.1%} of tile-cycles spent computing",
    )
    figure.tight_layout()
    return figure
