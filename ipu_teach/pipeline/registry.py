"""Every pipeline schedule in one place: name, display name, aliases, slot formula, accumulation rule.

To add a schedule, write its slot formula here and add one :class:`ScheduleSpec` to ``REGISTRY``. The
rest reads this table: the rules (:mod:`.rules`: names, aliases, accumulation), the generators
(:mod:`.schedules`: ``make_schedule`` and ``GENERATORS``), the pipeline explorer's list of schedules and
``ipu.ops.pipelining_ops.PipelineSchedule`` (the schedules with ``graphcore=True``, in this order).

A slot formula takes stage and micro-batch index arrays of shape (stages, 1) and (1, M) and returns
the forward slots, the backward slots (None in inference) and the weight-update slots (None for the
default: one step after the last backward in lock-step, else as soon as the stage's backwards are done).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


def any_count(stages: int, training: bool) -> int:
    """The accumulation rule of a schedule that runs any number of micro-batches."""
    return 1


@dataclass(frozen=True)
class ScheduleSpec:
    """One pipeline schedule. ``doc`` becomes the generator's docstring; ``accumulation(stages, training)``
    is the number the gradient accumulation count must be a multiple of."""

    key: str
    display: str
    slots: Callable
    lockstep: bool
    doc: str
    accumulation: Callable[[int, bool], int] = any_count
    graphcore: bool = False
    """Graphcore's IPU Keras offers it (``PipelineSchedule.<display>``) and enforces its accumulation rule."""
    aliases: tuple[str, ...] = ()


def _grouped_slots(s, m, stages, micro_batches, training):
    forward = m + s
    if not training:
        return forward, None, None
    return forward, m + 2 * stages - 1 - s, None


def _alternating_slots(s, m, stages, micro_batches, training):
    if not training:
        return m + s, None, None
    return 2 * m + s, 2 * m + 2 * stages - 1 - s, None


def _sequential_slots(s, m, stages, micro_batches, training):
    if not training:
        return stages * m + s, None, None
    round_start = 2 * stages * m
    backward = round_start + 2 * stages - 1 - s
    return round_start + s, backward, backward.max() + 1 + s[:, 0]


def _gpipe_slots(s, m, stages, micro_batches, training):
    forward = m + s
    if not training:
        return forward, None, None
    return forward, micro_batches + stages - 1 + m + (stages - 1 - s), None


def _eager_slots(s, m, stages, micro_batches, training):
    if not training:
        return m + s, None, None
    return 2 * (m + s), 2 * (m + 2 * stages - 1 - s) - 1, None


REGISTRY: tuple[ScheduleSpec, ...] = (
    ScheduleSpec(
        "grouped",
        "Grouped",
        _grouped_slots,
        lockstep=True,
        graphcore=True,
        accumulation=lambda stages, training: 2 * stages if training else stages,
        doc="""Graphcore's default: in each step every IPU runs one forward, then one backward.

    Forward passes are grouped together and backward passes grouped together; the IPUs synchronise
    after every step (lock-step), so a step lasts as long as its slowest IPU. The pipeline has 2 x
    stages steps of depth: micro-batch m's forward reaches stage s in step m + s and its backward
    in step m + 2*stages - 1 - s, so stage s stashes activations of 2 * (stages - s) micro-batches.
    Ramp-up and ramp-down last 2 * stages - 1 steps each. In inference: forwards only, step m + s.
    """,
    ),
    ScheduleSpec(
        "interleaved",
        "Interleaved",
        _alternating_slots,
        lockstep=True,
        graphcore=True,
        accumulation=lambda stages, training: stages,
        doc="""Graphcore's Interleaved: each IPU alternates one forward and one backward, one per step.

    A backward runs as soon as its activations exist, so stage s stashes only stages - s
    micro-batches (half of Grouped). Interpretation: like all of Graphcore's pipelines it runs in
    lock-step (the IPUs synchronise after every step), and in a step some IPUs run forwards while
    others run backwards, so every step lasts max(forward, backward): slower than Grouped when the
    two costs differ. Same per-IPU order as 1F1B, which instead runs event-driven.
    Micro-batch m: forward on stage s in step 2m + s, backward in step 2m + 2*stages - 1 - s.
    In inference there is nothing to interleave: forwards only, step m + s, as Grouped.
    """,
    ),
    ScheduleSpec(
        "sequential",
        "Sequential",
        _sequential_slots,
        lockstep=True,
        graphcore=True,
        doc="""One stage at a time, as a sharded model: micro-batch m runs forward through every stage,
    then backward through every stage, before micro-batch m + 1 starts.

    No overlap, one activation stash per stage; Graphcore uses it for debugging and to recompute on a single IPU.
    Every slot holds one action (the weight updates too), so the total time is the sum of all costs.
    """,
    ),
    ScheduleSpec(
        "poptorch",
        "PopTorch",
        _grouped_slots,
        lockstep=True,
        aliases=("pipelined_execution", "popart"),
        doc="""PopTorch's PipelinedExecution as ipu-teach costs it: Grouped's steps, with PopTorch's rule.

    PopTorch compiles through PopART, whose pipeline runs each micro-batch's forward on stage s in step
    m + s and its backward on the way back, in lock-step like Grouped; it accepts any gradient accumulation
    count of at least 2 x stages - 1 (poptorch checks that rule), not only Grouped's multiples of 2 x stages.
    Interpretation: PopART merges the last stage's forward and backward into one step, so its ramp is one
    step shorter than the Grouped steps costed here (the same work per step once the pipeline is full).
    """,
    ),
    ScheduleSpec(
        "gpipe",
        "GPipe",
        _gpipe_slots,
        lockstep=False,
        doc="""GPipe (Huang et al. 2019), for comparison: all forwards, then all backwards, event-driven.

    Simple, but every stage stashes all micro-batches before the first backward starts.
    """,
    ),
    ScheduleSpec(
        "one_f_one_b",
        "1F1B",
        _alternating_slots,
        lockstep=False,
        aliases=("1f1b", "pipedream", "pipedream_flush"),
        doc="""1F1B (PipeDream-flush, Narayanan et al. 2021), for comparison: event-driven, GPU-style.

    Stage s warms up with stages - s forwards, then alternates one forward and one backward, then
    cools down with the remaining backwards. The order is Interleaved's; the difference is timing:
    each action starts as soon as its inputs and its IPU are ready, with no global synchronisation.
    """,
    ),
    ScheduleSpec(
        "eager_1f1b",
        "Eager 1F1B",
        _eager_slots,
        lockstep=False,
        aliases=("eager1f1b",),
        doc="""Eager 1F1B, for comparison: 1F1B with a longer warm-up, each stage running forwards ahead
    of its first backward so that sending activations to the next IPU overlaps the wait for gradients,
    at the price of stashing about twice as many micro-batches.

    From Qi et al. 2024, "Pipeline Parallelism with Controllable Memory" (PaddlePaddle offers it);
    event-driven, not in Graphcore's PipelineSchedule. Stage s starts with 2 * (stages - s) - 1
    forwards instead of stages - s, then alternates one backward and one forward. The extra forwards
    are sent on while the stage waits for its first gradient, so a slow link delays the pipeline less
    than in 1F1B; the price is about twice 1F1B's stash (2 * (stages - s) - 1 micro-batches on stage
    s). The per-IPU order is Grouped's run without lock-step. Micro-batch m: forward on stage s in
    slot 2(m + s), backward in slot 2(m + 2*stages - 1 - s) - 1.
    """,
    ),
)
SPECS: dict[str, ScheduleSpec] = {spec.key: spec for spec in REGISTRY}
GRAPHCORE_SPECS: tuple[ScheduleSpec, ...] = tuple(spec for spec in REGISTRY if spec.graphcore)
