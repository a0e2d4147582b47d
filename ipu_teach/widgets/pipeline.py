"""The pipeline explorer: choose a schedule, stages, gradient accumulation, the backward:forward cost
ratio and recomputation, and see the Gantt chart per IPU with its ramp-up, main and ramp-down phases,
utilisation and stashed activations. ``draw_pipeline`` draws the same figure without widgets.

Costs come from numbers (every stage's forward costs 1, its backward ``ratio``) or from a pipelined
model compiled for the simulated IPU (``PipelineExplorer.from_model``), whose stages really differ.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import pipeline
from .figure_widget import FigureWidget, new_figure

SCHEDULES = ("Grouped", "Interleaved", "Sequential", "GPipe", "1F1B")


@dataclass
class PipelineView:
    """What was drawn: the timed schedule and its metrics, or the rule that forbids the combination."""

    timeline: object = None
    metrics: object = None
    error: str = ""


def uniform_costs(stages: int, ratio: float):
    """Every stage's forward costs one unit and its backward ``ratio`` units."""
    return pipeline.StageCosts.uniform(stages, forward=1.0, backward=float(ratio))


def time_pipeline(schedule="Grouped", stages=4, accumulation=16, ratio=2.0, recompute=False, costs=None,
                  training=True) -> PipelineView:
    """Time one weight update's pipeline; a combination Graphcore forbids gives its rule as ``error``."""
    costs = costs or uniform_costs(stages, ratio)
    if schedule in ("Grouped", "Interleaved", "Sequential"):
        try:
            pipeline.check_gradient_accumulation(schedule, costs.stages, accumulation, training)
        except pipeline.PipelineScheduleError as rule:
            return PipelineView(error=str(rule))
    plan = pipeline.make_schedule(schedule, costs.stages, accumulation, training=training)
    timeline = pipeline.time_schedule(plan, costs, recompute=recompute)
    return PipelineView(timeline, pipeline.summarise(timeline))


def caption(view: PipelineView, unit: str) -> str:
    if view.error:
        return f"<b>Not allowed:</b> {view.error}"
    m = view.metrics
    stash = ", ".join(f"stage {i}: {n}" for i, n in enumerate(m.peak_stash))
    return (f"{m.schedule}: {m.stages} stages, {m.micro_batches} micro-batches; total {m.total_seconds:.4g} {unit}; "
            f"utilisation {m.utilisation:.0%} (bubble {m.bubble_fraction:.0%}); ramp-up {m.phases.ramp_up:.3g}, "
            f"main {m.phases.main:.3g}, ramp-down {m.phases.ramp_down:.3g} {unit}; "
            f"peak stash (micro-batches) {stash}")


def draw(figure, view: PipelineView, unit: str):
    if view.error:
        ax = figure.add_subplot()
        ax.text(0.5, 0.5, view.error, ha="center", va="center", wrap=True, fontsize=9)
        ax.set_axis_off()
        return
    pipeline.plot_schedule(view.timeline, ax=figure.add_subplot())
    figure.axes[0].set_xlabel(f"time ({unit})")


def draw_pipeline(schedule="Grouped", stages=4, accumulation=16, ratio=2.0, recompute=False, costs=None,
                  unit="units"):
    """The explorer's figure as a plain function: returns (matplotlib Figure, PipelineView)."""
    view = time_pipeline(schedule, stages, accumulation, ratio, recompute, costs)
    figure = new_figure((10, 1.5 + 0.6 * (costs.stages if costs else stages)))
    draw(figure, view, unit)
    return figure, view


class PipelineExplorer(FigureWidget):
    """``PipelineExplorer()`` from numbers, or ``PipelineExplorer.from_model(model)`` after a pipelined
    ``fit`` on the simulated IPU (its stages' real costs, in simulated microseconds)."""

    figure_size = (10, 4)

    def __init__(self, schedule="Grouped", stages=4, accumulation=16, ratio=2.0, recompute=False, costs=None,
                 unit="units"):
        import ipywidgets
        if schedule not in SCHEDULES:
            raise ValueError(f"PipelineExplorer: schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
        self.costs, self.unit = costs, unit
        self.schedule = ipywidgets.Dropdown(options=SCHEDULES, value=schedule, description="schedule")
        self.stages = ipywidgets.IntSlider(value=costs.stages if costs else stages, min=1, max=8,
                                           description="stages", disabled=costs is not None)
        self.accumulation = ipywidgets.IntSlider(value=accumulation, min=1, max=64, description="accumulation")
        self.ratio = ipywidgets.FloatSlider(value=ratio, min=0.5, max=4.0, step=0.25, description="bwd : fwd",
                                            disabled=costs is not None)
        self.recompute = ipywidgets.Checkbox(value=recompute, description="recompute")
        self.view = None
        super().__init__([self.schedule, self.stages, self.accumulation, self.ratio, self.recompute])

    @classmethod
    def from_model(cls, model, **kwargs):
        executable = getattr(getattr(model, "device_executor", None), "executable", None)
        run = getattr(executable, "pipeline", None)
        if run is None:
            raise ValueError("PipelineExplorer.from_model needs a pipelined model that has been compiled on the "
                             "simulated IPU (fit it inside an IPUStrategy scope with keras.ipu.PipelineStage first)")
        micro = {name: [seconds * 1e6 for seconds in getattr(run.costs, name)]
                 for name in ("forward", "backward", "weight_update")}
        costs = pipeline.StageCosts(micro["forward"], micro["backward"], micro["weight_update"],
                                    run.costs.transfer_bytes, run.costs.link_bytes_per_s / 1e6,
                                    run.costs.link_latency_s * 1e6)
        accumulation = kwargs.pop("accumulation", int(run.schedule.micro_batch.max()) + 1)
        return cls(costs=costs, accumulation=accumulation, unit="simulated us", **kwargs)

    def draw(self, figure) -> str:
        self.view = time_pipeline(self.schedule.value, self.stages.value, self.accumulation.value, self.ratio.value,
                                  self.recompute.value, self.costs)
        draw(figure, self.view, self.unit)
        return caption(self.view, self.unit)
