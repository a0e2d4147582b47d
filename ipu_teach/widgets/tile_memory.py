"""The tile-memory explorer: every tile of an IPU stacked by category with the SRAM limit, one tile's
details, and the bytes live over the program steps with the peak marked (PopVision's Memory and
Liveness reports in one picture). ``plot_tile_memory`` draws the same figure without widgets.
"""
from __future__ import annotations

import numpy as np

from ..hardware import CODE_CATEGORIES
from .figure_widget import FigureWidget, plot_text

KIB = 1024
TENSOR_COLOURS = {"variables": "tab:blue", "optimizer state": "tab:cyan", "gradient accumulators": "tab:purple",
                  "activations": "tab:orange"}
CODE_COLOURS = dict(zip(CODE_CATEGORIES, ("tab:green", "tab:olive", "tab:brown", "tab:pink", "tab:gray", "tab:red")))
LIVENESS_SCOPES = ("whole IPU", "selected tile")


def category_colour(category: str) -> str:
    return TENSOR_COLOURS.get(category) or CODE_COLOURS.get(category, "black")


def _check(report, ipu, tile):
    target = report.compilation.target
    if not 0 <= ipu < target.numIPUs:
        raise ValueError(f"plot_tile_memory: IPU {ipu} does not exist; the report has {target.numIPUs} IPU(s)")
    if not 0 <= tile < target.tilesPerIPU:
        raise ValueError(f"plot_tile_memory: tile {tile} does not exist; an IPU has {target.tilesPerIPU} tiles")


def draw_tile_memory(figure, report, ipu: int = 0, tile: int | None = None, liveness_of: str = "whole IPU") -> str:
    """Draw on ``figure``: all tiles (top), tile ``tile`` by category (bottom left), liveness (bottom right).
    ``tile`` defaults to the fullest tile. Returns a one-line caption (plain text: it holds report names)."""
    compilation, target = report.compilation, report.compilation.target
    totals = compilation.tile_memory(ipu) if 0 <= ipu < target.numIPUs else None
    tile = int(np.argmax(totals)) if tile is None and totals is not None else tile
    _check(report, ipu, tile)
    if liveness_of not in LIVENESS_SCOPES:
        raise ValueError(f"plot_tile_memory: liveness_of must be one of {LIVENESS_SCOPES}, got {liveness_of!r}")
    grid = figure.add_gridspec(2, 2, height_ratios=[1, 1])
    every, detail, live = figure.add_subplot(grid[0, :]), figure.add_subplot(grid[1, 0]), figure.add_subplot(grid[1, 1])
    by_category = {c: sums[ipu] for c, sums in compilation.memory_by_category.items()}
    tiles = np.arange(target.tilesPerIPU)
    every.stackplot(tiles, *[v / KIB for v in by_category.values()], labels=[plot_text(c) for c in by_category],
                    colors=[category_colour(c) for c in by_category])
    sram = target.bytesPerTile / KIB
    every.axhline(sram, color="black", linestyle="--", linewidth=1, label="SRAM per tile")
    every.axvline(tile, color="black", linewidth=0.8, alpha=0.6)
    every.set(xlim=(0, max(target.tilesPerIPU - 1, 1)), ylim=(0, 1.08 * max(sram, totals.max(initial=0) / KIB)),
              xlabel="tile", ylabel="KiB", title=plot_text(f"Memory of every tile of IPU {ipu} ({target.name}, simulated)"))
    every.legend(loc="upper right", fontsize="x-small", ncol=3)

    names = list(by_category)
    values = [int(by_category[c][tile]) for c in names]
    detail.barh([plot_text(c) for c in names], [v / KIB for v in values], color=[category_colour(c) for c in names])
    detail.invert_yaxis()
    detail.tick_params(axis="y", labelsize="x-small")
    detail.set(xlabel="KiB", title=f"tile {tile}: {totals[tile] / KIB:,.1f} KiB of {sram:,.0f} KiB")

    steps = compilation.liveness(ipu, None if liveness_of == "whole IPU" else tile)
    unit, unit_name = (KIB * KIB, "MiB") if liveness_of == "whole IPU" else (KIB, "KiB")
    y = np.array([s.totalBytes for s in steps], dtype=np.float64) / unit
    always = np.array([s.alwaysLiveBytes for s in steps], dtype=np.float64) / unit
    live.plot(np.arange(len(steps)), y, color="tab:orange", label="live (all)")
    live.plot(np.arange(len(steps)), always, color="tab:blue", linestyle=":", label="always live")
    peak = compilation.live_peak(ipu, None if liveness_of == "whole IPU" else tile)
    caption = f"IPU {ipu}, tile {tile}: {totals[tile]:,} bytes ({totals[tile] / target.bytesPerTile:.1%} of SRAM)"
    if peak is not None:
        live.plot([peak.index], [peak.totalBytes / unit], "v", color="red", label=f"peak at step {peak.index}")
        caption += f"; live peak of the {liveness_of}: {peak.totalBytes:,} bytes at step {peak.index} `{peak.name}`"
    live.set(xlabel="program step", ylabel=unit_name, ylim=(0, None),
             title=f"liveness of the {liveness_of}" + (f" (tile {tile})" if liveness_of != "whole IPU" else ""))
    live.legend(loc="lower right", fontsize="x-small")
    figure.tight_layout()
    return caption


def plot_tile_memory(report, ipu: int = 0, tile: int | None = None, liveness_of: str = "whole IPU"):
    """The explorer's figure as a pyplot Figure (stable output for notebooks and tests)."""
    import matplotlib.pyplot as plt
    figure = plt.figure(figsize=TileMemoryExplorer.figure_size)
    draw_tile_memory(figure, report, ipu, tile, liveness_of)
    return figure


class TileMemoryExplorer(FigureWidget):
    """Pick an IPU, a tile (it starts on the fullest) and whose liveness to show; the figure follows."""

    figure_size = (10, 6.5)

    def __init__(self, report):
        import ipywidgets
        self.report = report
        target = report.compilation.target
        self.ipu = ipywidgets.Dropdown(options=[(f"IPU {i}", i) for i in range(target.numIPUs)], value=0,
                                       description="IPU")
        self.tile = ipywidgets.IntSlider(value=int(np.argmax(report.compilation.tile_memory(0))), min=0,
                                         max=target.tilesPerIPU - 1, description="tile", continuous_update=False)
        self.liveness_of = ipywidgets.Dropdown(options=LIVENESS_SCOPES, value=LIVENESS_SCOPES[0],
                                               description="liveness of")
        super().__init__([self.ipu, self.tile, self.liveness_of])

    def draw(self, figure) -> str:
        return draw_tile_memory(figure, self.report, self.ipu.value, self.tile.value, self.liveness_of.value)
