"""The tile-memory explorer: every tile of an IPU stacked by PopVision's categories with the SRAM limit, one
tile's details (PopVision's categories, and the tensors' roles beside them), and the bytes live over the
program steps with the peak marked (PopVision's Memory and Liveness reports in one picture).
``plot_tile_memory`` draws the same figure without widgets.
"""

from __future__ import annotations

import os

import numpy as np

from ..hardware import ALWAYS_LIVE_VARIABLES, CODE_CATEGORIES, NOT_ALWAYS_LIVE_VARIABLES
from .figure_widget import FigureWidget, plot_text

KIB = 1024
TENSOR_COLOURS = {
    ALWAYS_LIVE_VARIABLES: "tab:blue",
    NOT_ALWAYS_LIVE_VARIABLES: "tab:orange",
    "variables": "tab:blue",
    "optimizer state": "tab:cyan",
    "gradient accumulators": "tab:purple",
    "activations": "tab:orange",
    "gradients": "salmon",
    "temporary memory": "gold",
}
ROLE_PREFIX = "role: "
"""The tile's details list PopVision's categories, then each tensor role's bytes under this prefix (roles share
memory when never live together, so they may add up to more than the tile's total)."""
CODE_COLOURS = dict(zip(CODE_CATEGORIES, ("tab:green", "tab:olive", "tab:brown", "tab:pink", "tab:gray", "tab:red")))
LIVENESS_SCOPES = ("whole IPU", "selected tile")
SCALE_TO_DATA_BELOW = 0.4  # below this fraction of the SRAM on the fullest tile, the y axis follows the data
SRAM_GID = "sram-per-tile"
TILE_BOX_WIDTH = "90px"  # "1471" and the box's arrows


def category_colour(category: str) -> str:
    category = category.removeprefix(ROLE_PREFIX)
    return TENSOR_COLOURS.get(category) or CODE_COLOURS.get(category, "black")


def _draw_sram_limit(ax, sram_kib: float, fullest_kib: float) -> None:
    """The SRAM per tile as a dashed line, with the axis scaled to the data: a model that fills a few
    percent of every tile still shows its categories, and the limit is then named above the plot."""
    if fullest_kib >= SCALE_TO_DATA_BELOW * sram_kib:
        ax.axhline(sram_kib, color="black", linestyle="--", linewidth=1, label="SRAM per tile", gid=SRAM_GID)
        ax.set_ylim(0, 1.08 * max(sram_kib, fullest_kib))
        return
    ax.set_ylim(0, 1.25 * max(fullest_kib, 1e-3))
    ax.annotate(
        f"SRAM per tile: {sram_kib:,.0f} KiB, off this scale ({fullest_kib / sram_kib:.1%} used at most)",
        xy=(0.99, 0.97),
        xycoords="axes fraction",
        ha="right",
        va="top",
        fontsize="small",
        gid=SRAM_GID,
        bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.6"},
    )


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
    by_category = {c: sums[ipu] for c, sums in compilation.memory_by_popvision_category.items()}
    present = {c: v for c, v in by_category.items() if v.any()}  # a legend entry only for what is drawn
    tiles = np.arange(target.tilesPerIPU)
    every.stackplot(
        tiles,
        *[v / KIB for v in present.values()],
        labels=[plot_text(c) for c in present],
        colors=[category_colour(c) for c in present],
    )
    every.axvline(tile, color="black", linewidth=0.8, alpha=0.6)
    every.set(
        xlim=(0, max(target.tilesPerIPU - 1, 1)),
        xlabel="tile",
        ylabel="KiB",
        title=plot_text(f"Memory of every tile of IPU {ipu} ({target.name}, simulated)"),
    )
    _draw_sram_limit(every, target.bytesPerTile / KIB, totals.max(initial=0) / KIB)
    every.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small", frameon=False)
    sram = target.bytesPerTile / KIB

    details = tile_details(compilation, ipu, tile)
    bars = detail.barh(
        [plot_text(c) for c in details],
        [v / KIB for v in details.values()],
        color=[category_colour(c) for c in details],
    )
    for bar, name in zip(bars, details):
        bar.set_hatch("//" if name.startswith(ROLE_PREFIX) else "")  # a role, beside PopVision's categories
    detail.invert_yaxis()
    detail.tick_params(axis="y", labelsize="x-small")
    detail.set_xlabel("KiB")
    detail.set_title(f"tile {tile}: {totals[tile] / KIB:,.1f} KiB of {sram:,.0f} KiB", fontsize="medium")

    steps = compilation.liveness(ipu, None if liveness_of == "whole IPU" else tile)
    unit, unit_name = (KIB * KIB, "MiB") if liveness_of == "whole IPU" else (KIB, "KiB")
    y = np.array([s.totalBytes for s in steps], dtype=np.float64) / unit
    always = np.array([s.alwaysLiveBytes for s in steps], dtype=np.float64) / unit
    live.plot(np.arange(len(steps)), y, color="tab:orange", label="live (all)")
    live.plot(np.arange(len(steps)), always, color="tab:blue", linestyle=":", label="always live")
    peak = compilation.live_peak(ipu, None if liveness_of == "whole IPU" else tile)
    caption = f"IPU {ipu}, tile {tile}: {totals[tile]:,} bytes ({totals[tile] / target.bytesPerTile:.1%} of SRAM)"
    over = int((totals > target.bytesPerTile).sum())
    if over:
        caption = f"{over} of {target.tilesPerIPU} tiles over their SRAM (out of memory); " + caption
    if peak is not None:
        live.plot([peak.index], [peak.totalBytes / unit], "v", color="red", label=f"peak at step {peak.index}")
        caption += f"; live peak of the {liveness_of}: {peak.totalBytes:,} bytes at step {peak.index} `{peak.name}`"
    live.set(xlabel="program step", ylabel=unit_name, ylim=(0, None))
    live.set_title(
        "liveness of the whole IPU" if liveness_of == "whole IPU" else f"liveness of tile {tile}", fontsize="medium"
    )
    live.legend(loc="best", fontsize="x-small")
    figure.tight_layout()
    return caption


def tile_details(compilation, ipu: int, tile: int) -> dict:
    """``{name: bytes}`` of one tile as the details panel lists them: PopVision's categories (they add up to
    the tile's total), then the tensors' roles (``role: activations``, ...), each tensor counted whole."""
    memory = compilation.tiles[ipu * compilation.target.tilesPerIPU + tile].memory
    roles = {ROLE_PREFIX + c: v for c, v in memory.byCategory.items() if c not in CODE_CATEGORIES}
    return {**memory.byPopVisionCategory, **roles}


def plot_tile_memory(report, ipu: int = 0, tile: int | None = None, liveness_of: str = "whole IPU"):
    """Returns the tile-memory explorer's figure as a pyplot Figure, without widgets.

    Every tile of an IPU stacked by memory category against the SRAM limit, one tile's details, and the
    bytes live over the program steps with the peak marked: PopVision's Memory and Liveness reports in
    one picture, with a stable output for notebooks and tests.

    Args:
      report: A profiling ``Report``, or the path of one.
      ipu: Integer, the IPU shown. Default: 0.
      tile: Optional integer, the tile detailed. Default: None, the fullest.
      liveness_of: ``"whole IPU"`` or ``"selected tile"``. Default: ``"whole IPU"``.

    Example:

    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> import matplotlib.pyplot as plt
    >>> from ipu_teach.widgets import plot_tile_memory
    >>> figure = plot_tile_memory(report)
    >>> len(figure.axes) >= 3
    True
    >>> plt.close(figure)
    """
    import matplotlib.pyplot as plt

    figure = plt.figure(figsize=TileMemoryExplorer.figure_size)
    draw_tile_memory(figure, as_report(report, "plot_tile_memory"), ipu, tile, liveness_of)
    return figure


def as_report(source, what: str = "TileMemoryExplorer"):
    """A profiling Report from a Report or the path of one (a report folder or its JSON file), such as
    the out-of-memory report written with ``debug.allowOutOfMemory``."""
    if hasattr(source, "compilation"):
        return source
    if isinstance(source, (str, os.PathLike)):
        from ..profiling import open_report

        return open_report(source)
    hint = ""
    if isinstance(source, MemoryError):
        hint = (
            " An out-of-memory error holds no report: compile with POPLAR_ENGINE_OPTIONS="
            '\'{"debug.allowOutOfMemory": "true"}\' and reports on, then pass '
            "profiling.open_report(profiling.last_report_path())."
        )
    raise TypeError(f"{what} needs a profiling report or the path of one, got {type(source).__name__}.{hint}")


class TileMemoryExplorer(FigureWidget):
    """An ipywidgets explorer of a report's tile memory: pick an IPU, a tile and whose liveness to show.

    The figure of ``plot_tile_memory`` follows the controls; the tile starts on the fullest. The tile has a
    slider and a number box (``tile_number``): with 1,472 tiles a pixel of the slider spans several, so a
    tile named in a report is typed. It takes a
    report or its path, also the report of a model that does not fit in memory (written with
    ``debug.allowOutOfMemory``), to see which tiles overflow and why. Display it in a notebook.

    Args:
      report: A profiling ``Report``, or the path of one.

    Raises:
      TypeError: for anything else (an out-of-memory error holds no report: the message says how to get one).

    Example:

    >>> from ipu_teach.examples import small_report
    >>> report = small_report()                # a Dense model trained on 16 tiles, profiled
    >>> from ipu_teach.widgets import TileMemoryExplorer
    >>> explorer = TileMemoryExplorer(report)
    >>> explorer.tile.value == int(report.compilation.tile_memory(0).argmax())
    True
    """

    figure_size = (8.4, 5.4)  # 806 pixels wide on the page

    def __init__(self, report):
        import ipywidgets

        self.report = report = as_report(report)
        target = report.compilation.target
        self.ipu = ipywidgets.Dropdown(
            options=[(f"IPU {i}", i) for i in range(target.numIPUs)], value=0, description="IPU"
        )
        last = target.tilesPerIPU - 1
        self.tile = ipywidgets.IntSlider(
            value=int(np.argmax(report.compilation.tile_memory(0))),
            min=0,
            max=last,
            description="tile",
            readout=False,  # the number box beside it shows the tile and takes a typed one
            continuous_update=False,
        )
        self.tile_number = ipywidgets.BoundedIntText(
            value=self.tile.value,
            min=0,
            max=last,
            tooltip=f"type a tile index, 0 to {last}",
            layout=ipywidgets.Layout(width=TILE_BOX_WIDTH),
        )
        ipywidgets.link((self.tile, "value"), (self.tile_number, "value"))
        self.liveness_of = ipywidgets.Dropdown(
            options=LIVENESS_SCOPES, value=LIVENESS_SCOPES[0], description="liveness of"
        )
        controls = [self.ipu, self.tile, self.liveness_of]
        super().__init__(controls, [self.ipu, ipywidgets.HBox([self.tile, self.tile_number]), self.liveness_of])

    def draw(self, figure) -> str:
        return draw_tile_memory(figure, self.report, self.ipu.value, self.tile.value, self.liveness_of.value)
