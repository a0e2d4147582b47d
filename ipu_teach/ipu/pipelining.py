"""Pipelining a Keras model over IPUs: stage assignment and the plan the executor runs.

The stage assignment functions here are model methods (``keras_extensions.ModelExtension`` declares them,
with ``set_pipelining_options``, whose values ``plan_for`` takes).

Stages come from ``keras.ipu.PipelineStage`` blocks (a stage at call time wins over one at
construction) or from ``set_pipeline_stage_assignment``. Stage s runs on IPU
``device_mapping[s]`` (default s); IPUs beyond one pipeline's replicate it. Training numerics are
gradient accumulation's: the pipeline changes when each micro-batch runs, not what it computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..keras.engine.summary import print_row
from ..keras.layers.base import InputLayer
from ..keras.models import Sequential
from ..schedules import rules as pipeline_rules
from . import messages
from .ops.pipelining_ops import PipelineSchedule


class PipelineStageAssignment:
    """Graphcore's record of which stage one call of a layer (a node, in post-order) belongs to."""

    def __init__(self, tensor, node_index):
        self._tensor = tensor
        self.layer = tensor.layer
        self.node_index = node_index
        self.inbound_layers = [t.layer for t in tensor.inputs]

    @property
    def pipeline_stage(self):
        return self._tensor.pipeline_stage

    @pipeline_stage.setter
    def pipeline_stage(self, stage):
        self._tensor.pipeline_stage = _check_stage(stage)

    def __repr__(self):
        return f"PipelineStageAssignment(layer={self.layer.name!r}, pipeline_stage={self.pipeline_stage})"


def _check_stage(stage):
    if stage is not None and (isinstance(stage, bool) or not isinstance(stage, int) or stage < 0):
        raise ValueError(f"A pipeline stage must be an integer >= 0, got {stage!r}")
    return stage


def _nodes(model, action="get") -> list:
    if getattr(model, "subclassed", False) and not model.traced:
        _untraced(model, action)
    model.ensure_built()
    return [t for t in model._order if not isinstance(t.layer, InputLayer)]


def _untraced(model, action):
    """Graphcore's Keras' errors for a subclassed model whose call has not been traced into layer calls."""
    if model.trace_error is not None:
        raise RuntimeError(
            f"Cannot {action} pipeline stage assignments for model `{model.name}`: its call could not be traced "
            f"with keras.Input tensors ({model.trace_error}), so ipu-teach cannot tell which layer calls it makes; "
            "make call use layers only (wrap tf ops in keras.layers.Lambda or a layer of your own)"
        )
    hint = ", or assign pipeline stages in your graph definition using PipelineStage scopes" if action == "set" else ""
    raise RuntimeError(
        f"Cannot {action} pipeline stage assignments for model `{model.name}` which has not been built yet. "
        f"Please call `model.build()` first{hint}."
    )


def get_pipeline_stage_assignment(self) -> list:
    """Returns the pipeline stage assignment of every layer call in the model (Graphcore's Keras).

    One ``PipelineStageAssignment`` per layer call (a node), in post-order: the order the model computes
    them. Each has a ``layer``, its ``inbound_layers`` and a ``pipeline_stage`` that can be changed and
    given back to ``set_pipeline_stage_assignment``.

    Returns:
      A list of ``PipelineStageAssignment``, ``pipeline_stage`` None where no stage is set.

    Example:

    >>> inputs = keras.Input(shape=(4,))
    >>> with keras.ipu.PipelineStage(0):
    ...     x = keras.layers.Dense(8, activation="relu")(inputs)
    >>> with keras.ipu.PipelineStage(1):
    ...     outputs = keras.layers.Dense(2, activation="softmax")(x)
    >>> model = keras.Model(inputs, outputs)
    >>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
    [0, 1]
    """
    assignments, calls = [], {}
    for tensor in _nodes(self):  # as Graphcore's Keras: a node's index is which call of its layer it is
        index = calls.get(id(tensor.layer), 0)
        calls[id(tensor.layer)] = index + 1
        assignments.append(PipelineStageAssignment(tensor, index))
    return assignments


def set_pipeline_stage_assignment(self, pipeline_stage_assignment) -> None:
    """Sets the pipeline stage of every layer call in the model (Graphcore's Keras).

    The alternative to ``keras.ipu.PipelineStage`` blocks for a model whose code cannot be changed, and
    the way to try different cuts of the same model. For a ``Sequential`` model: one stage per layer,
    also before it is built, as in Graphcore's tech note on porting Keras models.

    Args:
      pipeline_stage_assignment: A list of stage numbers (ints >= 0), or of the
        ``PipelineStageAssignment`` objects ``get_pipeline_stage_assignment`` returns, one per layer
        call in post-order.

    Raises:
      ValueError: if the count does not match the model's layer calls, or a stage is not an int >= 0.

    Example:

    >>> model = keras.Sequential([keras.layers.Dense(8, input_shape=(4,)), keras.layers.Dense(2)])
    >>> model.set_pipeline_stage_assignment([0, 1])
    >>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
    [0, 1]
    """
    unbuilt = isinstance(self, Sequential) and not self.built
    nodes = self.layers if unbuilt else _nodes(self, "set")
    stages = [getattr(a, "pipeline_stage", a) for a in pipeline_stage_assignment]
    if len(stages) != len(nodes):
        what = "layers" if isinstance(self, Sequential) else "layer calls (in post-order)"
        raise ValueError(
            f"set_pipeline_stage_assignment: model `{self.name}` has {len(nodes)} {what}, but "
            f"{len(stages)} stages were given; give one stage per {what[:-1] if what == 'layers' else 'call'}"
        )
    for stage in stages:
        _check_stage(stage)
    for node, stage in zip(nodes, stages):  # an unbuilt Sequential's layers pass their stage to the calls it makes
        node.pipeline_stage = stage


def reset_pipeline_stage_assignment(self) -> None:
    """Resets the pipeline stage assignment so the model is not pipelined (Graphcore's Keras).

    Every layer call loses its stage, including those set by ``keras.ipu.PipelineStage`` blocks: the same
    layers then run on one IPU (per replica), which the course uses to compare a pipeline with plain
    gradient accumulation.

    Example:

    >>> from ipu_teach.examples import two_stage_model
    >>> model = two_stage_model()           # Dense(8) on stage 0, Dense(2) on stage 1
    >>> model.reset_pipeline_stage_assignment()
    >>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
    [None, None]
    """
    for tensor in _nodes(self):
        tensor.pipeline_stage = None


def print_pipeline_stage_assignment_summary(self, line_length=None, print_fn=None) -> None:
    """Prints every layer call with its inputs and pipeline stage, in the layout of ``model.summary()``.

    Graphcore's way to check a pipeline's cut before compiling: ``unassigned`` marks a layer call with
    no stage.

    Args:
      line_length: Total length of printed lines. Default: None, 80.
      print_fn: Print function to use, called with each line. Default: None, ``print``.

    Example:

    >>> from ipu_teach.examples import two_stage_model
    >>> model = two_stage_model()           # Dense(8) on stage 0, Dense(2) on stage 1
    >>> model.print_pipeline_stage_assignment_summary()
    Model: "model"
    ________________________________________________________________________________
    Layer (type) (node index)               Input Layers            Pipeline Stage
    ================================================================================
    dense (Dense) (0)                       input_1                 0
    dense_1 (Dense) (0)                     dense                   1
    ================================================================================
    """
    print_fn = print_fn or print
    width = line_length or 80
    positions = [int(width * p) for p in (0.5, 0.8, 1.0)]
    print_fn(f'Model: "{self.name}"')
    print_fn("_" * width)
    print_row(["Layer (type) (node index)", "Input Layers", "Pipeline Stage"], positions, print_fn)
    print_fn("=" * width)
    for a in get_pipeline_stage_assignment(self):
        inbound = ", ".join(layer.name for layer in a.inbound_layers)
        stage = "unassigned" if a.pipeline_stage is None else a.pipeline_stage
        print_row([f"{a.layer.name} ({type(a.layer).__name__}) ({a.node_index})", inbound, stage], positions, print_fn)
    print_fn("=" * width)


@dataclass(frozen=True)
class PipelinePlan:
    """What the executor needs: stages, the IPU of each, the stage of each layer, schedule, recompute."""

    stages: int
    device_mapping: tuple
    ipus_per_replica: int
    stage_of_layer: dict
    schedule: PipelineSchedule
    recompute: bool
    accumulation: int | None


def plan_for(model, pipelining_options: dict, num_ipus: int, allow_recompute: bool) -> PipelinePlan | None:
    """The model's pipeline (with ``set_pipelining_options``' values), checked; None when no layer has a
    stage (the model is not pipelined)."""
    if getattr(model, "subclassed", False) and not model.traced:
        return None  # a call that cannot be traced runs unpipelined (its stages could not be known)
    nodes = _nodes(model)
    stages = [t.pipeline_stage for t in nodes]
    if all(s is None for s in stages):
        return None
    missing = [t.layer.name for t in nodes if t.pipeline_stage is None]
    if missing:
        raise ValueError(
            f"Pipeline stages missing: layer(s) {', '.join(missing)} of model `{model.name}` have no "
            "pipeline stage; wrap them in keras.ipu.PipelineStage(n) or call "
            "set_pipeline_stage_assignment with a stage for every layer"
        )
    for tensor in nodes:
        for parent in tensor.inputs:
            if parent.pipeline_stage is not None and parent.pipeline_stage > tensor.pipeline_stage:
                raise ValueError(
                    f"Pipeline stages out of order: layer `{tensor.layer.name}` is in stage "
                    f"{tensor.pipeline_stage} but its input comes from `{parent.layer.name}` in stage "
                    f"{parent.pipeline_stage}; a layer's stage must be >= the stages of its inputs"
                )
    count = max(stages) + 1
    unused = sorted(set(range(count)) - set(stages))
    if unused:
        raise ValueError(
            f"Pipeline stages missing: no layer is in stage(s) {unused}; stages must be numbered "
            f"0 to {count - 1} without gaps"
        )
    mapping = tuple(pipelining_options.get("device_mapping") or range(count))
    if len(mapping) != count:
        raise ValueError(
            f"device_mapping {list(mapping)} has {len(mapping)} entries but the model has {count} "
            "pipeline stages; give one IPU per stage"
        )
    ipus = max(mapping) + 1
    if ipus > num_ipus:
        raise ValueError(
            f"The pipeline of model `{model.name}` needs {ipus} IPUs ({count} stages) but only "
            f"{num_ipus} are selected; set config.auto_select_ipus = {1 << (ipus - 1).bit_length()}"
        )
    stage_of_layer = {t.layer.name: t.pipeline_stage for t in nodes}
    _warn_layers_in_several_stages(model, nodes, stage_of_layer)
    return PipelinePlan(
        count,
        mapping,
        ipus,
        stage_of_layer,
        pipelining_options.get("pipeline_schedule", PipelineSchedule.Grouped),
        bool(allow_recompute),
        pipelining_options.get("gradient_accumulation_steps_per_replica"),
    )


def _warn_layers_in_several_stages(model, nodes, stage_of_layer) -> None:
    """A layer called in several stages (Graphcore's keras_tf2_example12.py) is costed in one: ipu-teach names the
    ops of a step by layer, not by call. The numbers are the same; say what the simulated time assumes."""
    for layer in dict.fromkeys(t.layer for t in nodes):
        stages = sorted({t.pipeline_stage for t in nodes if t.layer is layer})
        if len(stages) > 1:
            messages.warning(
                f"Layer `{layer.name}` of model `{model.name}` is called in pipeline stages {stages}; ipu-teach "
                f"costs all its calls in stage {stage_of_layer[layer.name]} (the simulated time of the others is "
                "in that stage's, the numbers are unchanged)"
            )


def warn_unused(model, pipelining_options: dict, plan: PipelinePlan | None, num_ipus: int) -> None:
    """Say what a training run will not use: pipelining options on a model without stages (Graphcore's
    Keras ignores them too: it accumulates only with set_gradient_accumulation_options), and IPUs no
    replica of the pipeline runs on (Graphcore gives each replica a power-of-two number of IPUs, so a
    3-stage pipeline also leaves the fourth IPU of its device idle)."""
    steps = pipelining_options.get("gradient_accumulation_steps_per_replica")
    if plan is None and steps:
        messages.warning(
            f"Model `{model.name}` has pipelining options (gradient_accumulation_steps_per_replica="
            f"{steps}) but no pipeline stages, so it is not pipelined and they are ignored: training "
            "does not accumulate gradients. Put its layers in keras.ipu.PipelineStage blocks, or call "
            f"set_gradient_accumulation_options(gradient_accumulation_steps_per_replica={steps})."
        )
    if plan is not None and num_ipus % plan.ipus_per_replica:
        used = num_ipus // plan.ipus_per_replica * plan.ipus_per_replica
        messages.warning(
            f"The pipeline of model `{model.name}` runs on {plan.ipus_per_replica} IPUs per replica, so "
            f"it uses {used} of the {num_ipus} IPUs selected and {num_ipus - used} stay idle; use "
            f"{1 << (plan.ipus_per_replica - 1).bit_length()} stages (or a device_mapping over that "
            "many IPUs), or select fewer IPUs."
        )


def check_schedule(plan: PipelinePlan, accumulation: int, training: bool, what: str) -> None:
    """Graphcore's rule for the schedule, with ``what`` naming the value at fault."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    try:
        pipeline_rules.check_gradient_accumulation(plan.schedule.name, plan.stages, accumulation, training)
    except pipeline_rules.PipelineScheduleError as error:
        if what == "gradient_accumulation_steps_per_replica":
            raise
        raise pipeline_rules.PipelineScheduleError(
            f"In inference the pipeline runs steps_per_execution micro-batches: {error}".replace(
                "gradient_accumulation_steps_per_replica", "steps_per_execution"
            )
        ) from None
