"""A Gantt chart of a timed schedule: one row per IPU, forward / backward / weight-update boxes.

:func:`gantt_boxes` gives the boxes as plain data (what tests and widgets can check), and
:func:`plot_schedule` draws exactly those boxes with matplotlib (imported only when drawing),
labels them with micro-batch numbers and shades the ramp-up and ramp-down phases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .actions import NO_MICRO_BATCH, Kind
from .metrics import phases, utilisation
from .timing import ScheduleTiming

COLOURS = {Kind.FORWARD: "#4C72B0", Kind.BACKWARD: "#DD8452", Kind.WEIGHT_UPDATE: "#55A868"}
BOX_HEIGHT = 0.8
LABEL_FONT_SIZE = 7
CHARACTER_EM = 0.62  # a digit of DejaVu Sans is 0.64 em wide, a lower-case letter about 0.6
LABEL_PADDING_POINTS = 2.0
PHASE_FONT_SIZE = 8
EDGE_POINTS = 0.5  # the white line between neighbouring boxes
EDGE_SHARE = 0.2  # at most this share of a box's width is edge, so a box too thin to hold one keeps its colour


@dataclass(frozen=True)
class Box:
    """One drawn box: an action on an IPU row from ``start`` for ``width`` simulated seconds."""

    ipu: int
    stage: int
    kind: Kind
    micro_batch: int | None
    start: float
    width: float

    @property
    def label(self) -> str:
        return self.kind.value if self.micro_batch is None else f"{self.kind.value}{self.micro_batch}"


def gantt_boxes(timeline: ScheduleTiming) -> tuple[Box, ...]:
    """The boxes :func:`plot_schedule` draws, one per action, in execution order."""
    schedule = timeline.schedule
    columns = zip(
        schedule.ipu.tolist(),
        schedule.stage.tolist(),
        schedule.kind.tolist(),
        schedule.micro_batch.tolist(),
        timeline.start.tolist(),
        timeline.durations.tolist(),
    )
    return tuple(
        Box(ipu, stage, Kind.from_code(kind), None if batch == NO_MICRO_BATCH else batch, start, width)
        for ipu, stage, kind, batch, start, width in columns
    )


def plot_schedule(
    timeline: ScheduleTiming, ax=None, *, label_limit: int = 400, show_phases: bool = True, unit: str = "simulated s"
):
    """Draws a timed pipeline schedule as a Gantt chart and returns the matplotlib Figure.

    Example:

    >>> from ipu_teach import schedules
    >>> schedule = schedules.grouped(stages=2, micro_batches=4)
    >>> timeline = schedules.time_schedule(schedule, schedules.StageCosts.uniform(2, forward=1.0, backward=2.0))
    >>> figure = schedules.plot_schedule(timeline, unit="units")
    >>> [collection.get_gid() for collection in figure.axes[0].collections]
    ['pipeline-F', 'pipeline-B', 'pipeline-WU']

    Boxes of each kind form one PolyCollection with ``gid`` ``"pipeline-F"``, ``"pipeline-B"`` or
    ``"pipeline-WU"``; micro-batch labels are drawn (gid ``"pipeline-label"``) when there are at most
    ``label_limit`` boxes, in the boxes wide enough to hold them. ``unit`` names the time axis's unit:
    the timeline's numbers are seconds for a compiled model, abstract units for costs given as numbers.
    Without ``ax`` a new Figure is made (not registered with pyplot, so redraws do not pile up).
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    schedule = timeline.schedule
    if ax is None:
        ax = Figure(figsize=(10, 1.0 + 0.55 * schedule.ipus), layout="constrained").add_subplot()
    total = timeline.total
    if show_phases and total > 0:
        _mark_phases(ax, timeline)
    points_per_unit = _axes_width_points(ax) / (total if total > 0 else 1)
    for kind, colour in COLOURS.items():
        chosen = schedule.kind == kind.code
        if chosen.any():
            edges = np.minimum(EDGE_POINTS, EDGE_SHARE * timeline.durations[chosen] * points_per_unit)
            ax.add_collection(
                PolyCollection(
                    _rectangles(timeline, chosen),
                    facecolors=colour,
                    edgecolors="white",
                    linewidths=edges,
                    gid=f"pipeline-{kind.value}",
                )
            )
    ax.set_xlim(0, total if total > 0 else 1)
    if len(schedule) <= label_limit:
        for box in gantt_boxes(timeline):
            if box.width * points_per_unit >= _text_points(box.label, LABEL_FONT_SIZE) + LABEL_PADDING_POINTS:
                ax.text(
                    box.start + box.width / 2,
                    box.ipu,
                    box.label,
                    ha="center",
                    va="center",
                    fontsize=LABEL_FONT_SIZE,
                    color="white",
                    clip_on=True,
                    gid="pipeline-label",
                )
    ax.set_ylim(schedule.ipus - 0.5, -0.5)  # IPU 0 on top
    ax.set_yticks(range(schedule.ipus), [f"IPU {ipu}" for ipu in range(schedule.ipus)])
    ax.set_xlabel(f"time ({unit})")
    mode = "training" if schedule.training else "inference"
    ax.set_title(
        f"{schedule.name} schedule ({mode}): {counted(schedule.stages, 'stage')}, "
        f"{counted(schedule.micro_batches, 'micro-batch')}, {format_amount(total)} {unit}, "
        f"utilisation {utilisation(timeline):.0%}",
        fontsize=9,
        pad=16,
    )
    ax.legend(
        handles=[Patch(color=colour, label=kind.name.replace("_", " ").lower()) for kind, colour in COLOURS.items()],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=7,
    )
    return ax.figure


def counted(number: int, noun: str) -> str:
    """``1 stage``, ``4 stages``, ``1 micro-batch``, ``16 micro-batches``, ``1,000,000 micro-batches``."""
    return f"{number} {noun}" if number == 1 else f"{number:,} {noun}{'es' if noun.endswith('ch') else 's'}"


def format_amount(value: float) -> str:
    """Three significant digits, without an exponent for the totals a chart shows (2,570, not 2.57e+03)."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{float(f'{value:.3g}'):,.0f}"


def _text_points(text: str, font_size: float) -> float:
    """About how wide ``text`` is drawn (1/72 inch), to decide where it fits without a renderer."""
    return CHARACTER_EM * font_size * len(text)


def _axes_width_points(ax) -> float:
    """The axes' width on the page (1/72 inch), from its position in the figure as it is now."""
    return ax.get_position().width * ax.figure.get_figwidth() * 72


def _rectangles(timeline: ScheduleTiming, chosen: np.ndarray) -> np.ndarray:
    """Corners of the chosen actions' boxes, shape (boxes, 4, 2): the same boxes as :func:`gantt_boxes`."""
    left, right = timeline.start[chosen], timeline.end[chosen]
    ipu = timeline.schedule.ipu[chosen].astype(float)
    top, bottom = ipu - BOX_HEIGHT / 2, ipu + BOX_HEIGHT / 2
    return np.stack(
        [np.stack(corner, axis=-1) for corner in ((left, top), (right, top), (right, bottom), (left, bottom))], axis=1
    )


def _mark_phases(ax, timeline: ScheduleTiming) -> None:
    """Shade ramp-up and ramp-down, draw lines at the main phase's ends and name the three phases."""
    spans = phases(timeline)
    edges = (0.0, spans.main_start, spans.main_end, timeline.total)
    points_per_unit = _axes_width_points(ax) / timeline.total
    # a name wider than its phase starts (ramp-up) or ends (ramp-down) at the chart's edge, never beyond it
    outside = {"ramp-up": (0.0, "left"), "ramp-down": (timeline.total, "right")}
    for left, right, name in zip(edges[:-1], edges[1:], ("ramp-up", "main", "ramp-down")):
        if right <= left:
            continue
        if name in outside:
            ax.axvspan(left, right, color="0.9", zorder=0, gid=f"phase-{name}")
        x, align = (left + right) / 2, "center"
        if (right - left) * points_per_unit < _text_points(name, PHASE_FONT_SIZE):
            x, align = outside.get(name, (x, align))
        ax.text(
            x,
            1.0,
            name,
            ha=align,
            va="bottom",
            fontsize=PHASE_FONT_SIZE,
            transform=ax.get_xaxis_transform(),
            clip_on=False,
            gid=f"phase-name-{name}",
        )
    for edge in (spans.main_start, spans.main_end):
        if 0 < edge < timeline.total:
            ax.axvline(edge, color="0.3", linestyle="--", linewidth=0.8)
