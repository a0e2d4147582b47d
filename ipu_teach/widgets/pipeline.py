"""The pipeline explorer: choose a schedule, stages, gradient accumulation, the backward:forward cost
ratio and recomputation, and see the Gantt chart per IPU with its ramp-up, main and ramp-down phases,
and beside it each IPU's utilisation and stashed activations. ``draw_pipeline`` draws the same figure
without widgets.

Costs come from numbers (every stage's forward costs 1, its backward ``ratio``, its weight update 1) or
from a pipelined model trained on the simulated IPU (``PipelineExplorer.from_model``), whose stages really differ.

Example:

>>> from ipu_teach.widgets.pipeline import time_pipeline
>>> for name in ("Grouped", "Interleaved", "Sequential"):
...     print(name, time_pipeline(name, stages=2, accumulation=4).metrics.total_seconds)
Grouped 16.0
Interleaved 19.0
Sequential 26.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import schedules
from ..schedules.figure import BOX_HEIGHT, counted, format_amount
from ..schedules.registry import GRAPHCORE_SPECS, REGISTRY
from .figure_widget import FigureWidget, new_figure

SCHEDULES = tuple(spec.display for spec in REGISTRY)
GRAPHCORE_SCHEDULES = tuple(spec.display for spec in GRAPHCORE_SPECS)  # the IPU's Keras offers these, with their rules
GANTT_GID = "pipeline-gantt"
UTILISATION_GID = "utilisation-per-ipu"
STASH_GID = "stash-per-ipu"
INSIDE_THE_BAR_ABOVE = 0.6  # of a panel's full scale: a longer bar's number is written inside it, not past the frame
MOST_MICRO_BATCHES = 64  # the accumulation slider's end, unless the explorer starts with more


def schedule_summary(schedule: str) -> str:
    """The schedule in one sentence: the first paragraph of its generator's docstring, shown under the controls."""
    generate = schedules.GENERATORS[schedules.schedule_key(schedule)]
    return " ".join(generate.__doc__.split("\n\n", 1)[0].split())


def allowed_accumulation(schedule: str, stages: int, wanted: int, most: int = MOST_MICRO_BATCHES) -> tuple:
    """``(multiple, largest, nearest)``: the accumulation counts the schedule allows on ``stages`` stages
    in training are ``multiple``, 2 x ``multiple``, ... ``largest`` (at most ``most``); ``nearest`` is the
    allowed count nearest ``wanted`` (a tie goes to the larger).

    >>> allowed_accumulation("Grouped", stages=4, wanted=12)
    (8, 64, 16)
    >>> allowed_accumulation("Interleaved", stages=3, wanted=64)
    (3, 63, 63)
    """
    multiple = schedules.accumulation_multiple(schedule, stages, training=True)
    largest = max(multiple, most // multiple * multiple)
    nearest = (wanted + multiple // 2) // multiple * multiple
    return multiple, largest, min(max(nearest, multiple), largest)


@dataclass(frozen=True)
class StashSizes:
    """What one micro-batch leaves in memory on each stage until its backward pass: all the activations
    the backward needs, or with recomputation only the stage's input (the rest is recomputed)."""

    activations: tuple[float, ...]
    inputs: tuple[float, ...]
    unit: str
    scale: float = 1.0
    """Divide by ``scale`` to show the bytes in ``unit`` (1e6 for MB)."""

    @classmethod
    def in_activation_units(cls, stages: int, input_share: float = 0.25) -> "StashSizes":
        """For costs given as numbers: one micro-batch's activations on a stage count 1; its input,
        one of the several layer outputs a stage keeps, counts ``input_share`` (an assumption)."""
        if not 0 < input_share <= 1:
            raise ValueError(
                f"StashSizes.in_activation_units: input_share is the stage input's size relative to "
                f"the activations the stage keeps, between 0 (excluded) and 1; got {input_share!r}"
            )
        return cls((1.0,) * stages, (float(input_share),) * stages, "micro-batch activations")


@dataclass
class PipelineView:
    """What was drawn: the timed schedule, its metrics and each IPU's stash, or the rule that forbids
    the combination (``error``)."""

    timeline: object = None
    metrics: object = None
    stash_per_ipu: tuple = ()
    stash_limit: float = 0.0
    """What the fullest IPU would stash if it kept every micro-batch's activations: the bars' full scale."""
    error: str = ""
    recompute: bool = False


def uniform_costs(stages: int, ratio: float):
    """Every stage's forward costs one unit, its backward ``ratio`` units and its weight update one unit
    (about a forward pass: enough to see the update in the chart, too little to change the lesson)."""
    return schedules.StageCosts.uniform(stages, forward=1.0, backward=float(ratio), weight_update=1.0)


def time_pipeline(
    schedule="Grouped",
    stages=4,
    accumulation=16,
    ratio=2.0,
    recompute=False,
    costs=None,
    sizes: StashSizes | None = None,
    device_mapping: Sequence[int] | None = None,
) -> PipelineView:
    """Times one weight update's pipeline in training, without drawing it.

    The schedule is generated, timed and measured: ``view.metrics`` has the total time, the ramp-up /
    main / ramp-down phases, the utilisation and the peak stash per stage. A combination Graphcore forbids
    (say Grouped with an accumulation that is not a multiple of 2 x stages) gives its rule as ``view.error``.
    Beyond ``schedules.EVERY_ACTION_AT_MOST`` micro-batches (4,096) the metrics come from the ramp-up, one period
    of the main phase and the ramp-down (``schedules.summarise_folded``: the same figures, in time and memory that
    do not grow with the accumulation) and ``view.timeline`` is None: there is no chart of every action to draw.

    Args:
      schedule: ``"Grouped"``, ``"Interleaved"``, ``"Sequential"``, ``"GPipe"`` or ``"1F1B"``. Default: ``"Grouped"``.
      stages: Integer, the pipeline stages (one per IPU). Default: 4.
      accumulation: Integer, the micro-batches per weight update. Default: 16.
      ratio: Float, the backward pass's cost over the forward's. Default: 2.0.
      recompute: Boolean, recompute activations instead of stashing them. Default: False.
      costs: Optional ``schedules.StageCosts``. Default: None, a forward of one unit per stage (``uniform_costs``).
      sizes: Optional ``StashSizes``. Default: None, one activation unit per stage.
      device_mapping: Optional list, the IPU of each stage. Default: None, stage n on IPU n.

    Returns:
      A ``PipelineView``: ``timeline``, ``metrics``, ``stash_per_ipu`` and ``error``.

    Example:

    >>> from ipu_teach.widgets.pipeline import time_pipeline
    >>> metrics = time_pipeline("Grouped", stages=2, accumulation=4, ratio=2.0).metrics
    >>> metrics.total_seconds, round(metrics.utilisation, 2), list(metrics.peak_stash)
    (16.0, 0.81, [4, 2])
    >>> print(time_pipeline("Grouped", stages=2, accumulation=6).error)
    The Grouped pipeline schedule with 2 stages in training needs ... but it is 6. ...
    """
    costs = costs or uniform_costs(stages, ratio)
    sizes = sizes or StashSizes.in_activation_units(costs.stages)
    if schedule in GRAPHCORE_SCHEDULES:
        try:
            schedules.check_gradient_accumulation(schedule, costs.stages, accumulation, training=True)
        except schedules.PipelineScheduleError as rule:
            return PipelineView(error=str(rule))
    stash = {"activation_bytes": sizes.activations, "input_bytes": sizes.inputs}
    if schedules.check_positive("accumulation", accumulation) > schedules.EVERY_ACTION_AT_MOST:
        timeline = None
        metrics = schedules.summarise_folded(
            schedule, accumulation, costs, recompute=recompute, device_mapping=device_mapping, **stash
        )
    else:
        plan = schedules.make_schedule(schedule, costs.stages, accumulation, device_mapping=device_mapping)
        timeline = schedules.time_schedule(plan, costs, recompute=recompute)
        metrics = schedules.summarise(timeline, **stash)
    mapping = list(schedules.check_device_mapping(costs.stages, device_mapping))
    per_ipu, everything = np.zeros(metrics.ipus), np.zeros(metrics.ipus)
    np.add.at(per_ipu, mapping, np.asarray(metrics.stash_bytes) / sizes.scale)
    np.add.at(everything, mapping, np.asarray(sizes.activations) * accumulation / sizes.scale)
    return PipelineView(timeline, metrics, tuple(float(v) for v in per_ipu), float(everything.max()), "", recompute)


def caption(view: PipelineView, unit: str, stash_unit: str) -> str:
    """The explorer's text: totals, phases and, per IPU, utilisation and stash (plain text, two lines)."""
    if view.error:
        return f"Not allowed: {view.error}"
    m = view.metrics
    per_ipu = "; ".join(
        f"IPU {i}: busy {u:.0%}, stash {format_amount(s)}"
        for i, (u, s) in enumerate(zip(m.utilisation_per_ipu, view.stash_per_ipu))
    )
    return (
        f"{m.schedule}: {counted(m.stages, 'stage')}, {counted(m.micro_batches, 'micro-batch')}; "
        f"total {format_amount(m.total_seconds)} {unit}; utilisation {m.utilisation:.0%} "
        f"(bubble {m.bubble_fraction:.0%}); ramp-up {format_amount(m.phases.ramp_up)}, "
        f"main {format_amount(m.phases.main)}, ramp-down {format_amount(m.phases.ramp_down)} {unit}\n"
        f"{per_ipu} (stash in {stash_unit}{', inputs only: recomputation' if view.recompute else ''})"
    )


def draw(figure, view: PipelineView, unit: str, stash_unit: str) -> None:
    """The Gantt chart with, on the same IPU rows, bars of utilisation and of stashed activations."""
    if view.error or view.timeline is None:
        ax = figure.add_subplot()
        text = view.error or _too_many_to_draw(view.metrics)
        ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=9)
        ax.set_axis_off()
        return
    height = figure.get_figheight()  # fixed margins in inches: faster to redraw than a layout engine
    gantt, busy, stash = figure.subplots(
        1,
        3,
        sharey=True,
        gridspec_kw={
            "width_ratios": (7, 1, 1),
            "wspace": 0.08,
            "left": 0.06,
            "right": 0.97,
            "bottom": 0.75 / height,
            "top": 1 - 0.75 / height,
        },
    )
    schedules.plot_schedule(view.timeline, ax=gantt, unit=unit)
    gantt.set_gid(GANTT_GID)
    m = view.metrics
    handles = gantt.get_legend().legend_handles
    gantt.get_legend().remove()
    figure.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False)
    ipus = np.arange(len(view.stash_per_ipu))
    stash_title = "stash\n(" + stash_unit.replace(" ", "\n") + ")"
    for ax, values, title, gid, colour, limit, text in (
        (busy, m.utilisation_per_ipu, "utilisation", UTILISATION_GID, "0.45", 1.0, "{:.0%}".format),
        (stash, view.stash_per_ipu, stash_title, STASH_GID, "#8172B3", view.stash_limit, format_amount),
    ):
        ax.set_gid(gid)
        ax.barh(ipus, values, height=BOX_HEIGHT, color=colour)
        for ipu, value in zip(ipus, values):  # a long bar holds its number, a short one has it beside it
            inside = value > INSIDE_THE_BAR_ABOVE * limit
            ax.text(
                value,
                ipu,
                f" {text(value)} ",
                va="center",
                ha="right" if inside else "left",
                fontsize=7,
                color="white" if inside else "black",
            )
        ax.set_xlim(0, 1.3 * limit)
        ax.set_title(title, fontsize=8)
        ax.tick_params(labelleft=False, labelsize=7)


def _too_many_to_draw(metrics) -> str:
    return (
        f"{metrics.schedule}: {counted(metrics.stages, 'stage')}, {counted(metrics.micro_batches, 'micro-batch')}, "
        f"too many to draw (at most "
        f"{schedules.EVERY_ACTION_AT_MOST:,}); timed from the ramp-up, one period of the main phase and the ramp-down"
    )


def draw_pipeline(
    schedule="Grouped",
    stages=4,
    accumulation=16,
    ratio=2.0,
    recompute=False,
    costs=None,
    sizes: StashSizes | None = None,
    unit="units",
    device_mapping=None,
):
    """Draws a pipeline's Gantt chart, with each IPU's utilisation and stash: the explorer's figure, without widgets.

    Returns the figure and the ``PipelineView`` that was drawn (see ``time_pipeline``), so a notebook can
    show the picture and print its figures.

    Args:
      schedule, stages, accumulation, ratio, recompute, costs, sizes, device_mapping: As for ``time_pipeline``.
      unit: String, the unit of the time axis. Default: ``"units"``.

    Returns:
      The tuple ``(matplotlib Figure, PipelineView)``.

    Example:

    >>> from ipu_teach.widgets.pipeline import draw_pipeline
    >>> figure, view = draw_pipeline("1F1B", stages=2, accumulation=4)
    >>> view.metrics.total_seconds, view.error
    (16.0, '')
    """
    count = costs.stages if costs else stages
    sizes = sizes or StashSizes.in_activation_units(count)
    view = time_pipeline(schedule, stages, accumulation, ratio, recompute, costs, sizes, device_mapping)
    figure = new_figure(PipelineExplorer.figure_size_for(count))
    draw(figure, view, unit, sizes.unit)
    return figure, view


class PipelineExplorer(FigureWidget):
    """An ipywidgets explorer of pipeline schedules: schedule, stages, accumulation, backward cost, recomputation.

    ``PipelineExplorer(stages=4, accumulation=16, ...)`` from numbers, or ``PipelineExplorer.from_model(model)``
    after a pipelined ``fit`` on the simulated IPU (its stages' real costs in simulated microseconds, and
    their real activation sizes). The figure of ``draw_pipeline`` follows the controls; ``explorer.view``
    holds what was drawn, and the caption says what the schedule is. The accumulation slider steps through
    the counts the schedule allows on the chosen stages; a count it forbids moves to the nearest allowed one,
    and the caption says so. Display it in a notebook.

    Args:
      schedule, stages, accumulation, ratio, recompute, costs, sizes, unit, device_mapping: The starting
        values, as for ``draw_pipeline``.

    Raises:
      ValueError: for an unknown schedule.

    Example:

    >>> from ipu_teach.widgets.pipeline import PipelineExplorer
    >>> explorer = PipelineExplorer(schedule="Interleaved", stages=2, accumulation=4)
    >>> explorer.accumulation.value = 8               # what moving the slider does
    >>> explorer.view.metrics.total_seconds
    35.0
    """

    figure_size = (8.75, 3.4)  # 840 pixels on the page: JupyterLab's output column at a 1024-pixel window is 844

    def __init__(
        self,
        schedule="Grouped",
        stages=4,
        accumulation=16,
        ratio=2.0,
        recompute=False,
        costs=None,
        sizes: StashSizes | None = None,
        unit="units",
        device_mapping=None,
    ):
        import ipywidgets

        if schedule not in SCHEDULES:
            raise ValueError(f"PipelineExplorer: schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        self.costs, self.sizes, self.unit, self.device_mapping = costs, sizes, unit, device_mapping
        self.schedule = ipywidgets.Dropdown(options=SCHEDULES, value=schedule, description="schedule")
        self.stages = ipywidgets.IntSlider(
            value=costs.stages if costs else stages,
            min=1,
            max=8,
            description="stages",
            disabled=costs is not None,
            continuous_update=False,
        )
        self.most_micro_batches = max(MOST_MICRO_BATCHES, accumulation)
        self.wanted_accumulation, self.shown_accumulation = accumulation, None
        self.accumulation = ipywidgets.IntSlider(
            value=accumulation,
            min=1,
            max=self.most_micro_batches,
            description="accumulation",
            continuous_update=False,
        )
        self.ratio = ipywidgets.FloatSlider(
            value=ratio,
            min=0.5,
            max=4.0,
            step=0.25,
            description="bwd : fwd",
            disabled=costs is not None,
            continuous_update=False,
        )
        self.recompute = ipywidgets.Checkbox(value=recompute, description="recompute")
        self.view = None
        super().__init__([self.schedule, self.stages, self.accumulation, self.ratio, self.recompute])

    @staticmethod
    def figure_size_for(stages: int) -> tuple:
        """Taller for more IPU rows, so boxes and labels keep their size."""
        return (PipelineExplorer.figure_size[0], 1.7 + 0.5 * stages)

    @classmethod
    def from_model(cls, model, **kwargs):
        """Returns the explorer for a model trained pipelined on the simulated IPU, with its real stage costs.

        Each stage's forward, backward and weight-update time and activation transfer, as the simulator
        measured them, and each stage's activations and input of one micro-batch (for the stash), so the
        schedules can be compared on this model; it opens on the model's own schedule. Always the training executable
        (``model.get_ipu_executable("train")``), also after evaluate or predict.

        Args:
          model: A Keras model fitted pipelined inside an ``IPUStrategy`` scope, or a PopTorch model whose
            blocks run on several IPUs, after its first call.
          **kwargs: Starting values for the controls (``schedule``, ``accumulation``...).

        Raises:
          ValueError: for a model that has not been trained pipelined on the simulated IPU (the message says
            what to do).

        Example:

        >>> from ipu_teach.examples import trained_pipeline_model
        >>> model = trained_pipeline_model()    # two stages on two IPUs, 4 micro-batches per weight update
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> from ipu_teach.widgets.pipeline import PipelineExplorer
        >>> explorer = PipelineExplorer.from_model(model)
        >>> explorer.costs.stages, explorer.unit, explorer.accumulation.value
        (2, 'simulated us', 4)
        """
        name = getattr(model, "name", model)
        executables = {}
        for mode in ("train", "test", "predict"):
            try:
                executables[mode] = model.get_ipu_executable(mode)
            except (AttributeError, ValueError):  # not an IPU model, or that mode has not run
                pass
        run = getattr(executables.get("train"), "pipeline", None)
        if run is None and any(getattr(e, "pipeline", None) for e in executables.values()):
            raise ValueError(
                f"PipelineExplorer.from_model needs the training pipeline of `{name}`, but it has "
                "been compiled again since fit (compile starts afresh) and has only run evaluate or "
                "predict: call from_model after fit and before compiling the model again"
            )
        if run is None:
            raise ValueError(
                f"PipelineExplorer.from_model needs a pipelined model that has been trained on the "
                f"simulated IPU, and `{name}` has not been: put its layers in "
                "keras.ipu.PipelineStage blocks, call set_pipelining_options and fit it inside an "
                "IPUStrategy scope first (a PopTorch model: poptorch.BeginBlock(layer, ipu_id=1) on a layer, "
                "then call its poptorch.trainingModel once)"
            )
        c = run.costs
        costs = schedules.StageCosts(
            [s * 1e6 for s in c.forward],
            [s * 1e6 for s in c.backward],
            [s * 1e6 for s in c.weight_update],
            c.transfer_bytes,
            c.link_bytes_per_s / 1e6,
            c.link_latency_s * 1e6,
            c.slot_sync_s * 1e6,
        )
        kwargs.setdefault("schedule", run.schedule.name)  # the model's own: Grouped, ..., PopTorch's
        kwargs.setdefault("accumulation", run.schedule.micro_batches)
        kwargs.setdefault("recompute", run.timeline.recompute)
        sizes = StashSizes(tuple(map(float, run.activation_bytes)), tuple(map(float, run.input_bytes)), "MB", 1e6)
        return cls(costs=costs, sizes=sizes, unit="simulated us", device_mapping=run.schedule.device_mapping, **kwargs)

    def follow_the_accumulation_rule(self, stages: int) -> str:
        """Makes the accumulation slider step through the counts the schedule allows on ``stages`` stages
        (Grouped: multiples of 2 x stages, Interleaved: of stages, the others: any); a count it does not
        allow moves to the nearest allowed one. The count the learner chose is kept: it comes back when
        the schedule allows it again. Returns a line saying what moved, or ``""``."""
        slider, schedule = self.accumulation, self.schedule.value
        if slider.value != self.shown_accumulation:  # set by the learner, not by this rule
            self.wanted_accumulation = slider.value
        wanted = self.wanted_accumulation
        multiple, largest, nearest = allowed_accumulation(schedule, stages, wanted, self.most_micro_batches)
        with self.holding_redraws(), slider.hold_trait_notifications():
            slider.step, slider.min, slider.max, slider.value = multiple, multiple, largest, nearest
        self.shown_accumulation = nearest
        if nearest == wanted:
            return ""
        return (
            f"accumulation {wanted} is not allowed: {schedule} on {counted(stages, 'stage')} needs a multiple of "
            f"{multiple}; moved to the nearest, {nearest}"
        )

    def draw(self, figure) -> str:
        stages = self.costs.stages if self.costs else self.stages.value
        sizes = self.sizes or StashSizes.in_activation_units(stages)
        figure.set_size_inches(self.figure_size_for(stages))
        moved = self.follow_the_accumulation_rule(stages)
        self.view = time_pipeline(
            self.schedule.value,
            self.stages.value,
            self.accumulation.value,
            self.ratio.value,
            self.recompute.value,
            self.costs,
            sizes,
            self.device_mapping,
        )
        draw(figure, self.view, self.unit, sizes.unit)
        lines = (moved, schedule_summary(self.schedule.value), caption(self.view, self.unit, sizes.unit))
        return "\n".join(line for line in lines if line)
