"""Schedule generators, one per entry of :mod:`.registry`: Graphcore's Grouped, Interleaved and Sequential, and
schedules from the literature for comparison (GPipe, 1F1B, ...).

Each generator takes plain numbers (stages, micro-batches = the gradient accumulation count,
training or inference) and returns a :class:`~ipu_teach.schedules.actions.Schedule`. It places
every action in a slot with its registry entry's closed formula on numpy arrays, so large pipelines cost no
Python loop (the tests check every formula against a step-by-step reference).
Stage ``s`` runs on IPU ``s`` unless ``device_mapping`` says otherwise. In training each stage ends
with one weight update, after the backward passes of all micro-batches (gradient accumulation).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .actions import BACKWARD, FORWARD, NO_MICRO_BATCH, WEIGHT_UPDATE, Schedule
from .registry import SPECS, ScheduleSpec
from .rules import check_gradient_accumulation, check_positive, display_name, schedule_key


def grouped(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """Graphcore's default: in each step every IPU runs one forward, then one backward.

    Forward passes are grouped together and backward passes grouped together; the IPUs synchronise
    after every step (lock-step), so a step lasts as long as its slowest IPU. The pipeline has 2 x
    stages steps of depth: micro-batch m's forward reaches stage s in step m + s and its backward
    in step m + 2*stages - 1 - s, so stage s stashes activations of 2 * (stages - s) micro-batches.
    Ramp-up and ramp-down last 2 * stages - 1 steps each. In inference: forwards only, step m + s.
    """
    return _generate(SPECS["grouped"], stages, micro_batches, training, device_mapping)


def interleaved(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """Graphcore's Interleaved: each IPU alternates one forward and one backward, one per step.

    A backward runs as soon as its activations exist, so stage s stashes only stages - s
    micro-batches (half of Grouped). Interpretation: like all of Graphcore's pipelines it runs in
    lock-step (the IPUs synchronise after every step), and in a step some IPUs run forwards while
    others run backwards, so every step lasts max(forward, backward): slower than Grouped when the
    two costs differ. Same per-IPU order as 1F1B, which instead runs event-driven.
    Micro-batch m: forward on stage s in step 2m + s, backward in step 2m + 2*stages - 1 - s.
    In inference there is nothing to interleave: forwards only, step m + s, as Grouped.
    """
    return _generate(SPECS["interleaved"], stages, micro_batches, training, device_mapping)


def sequential(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """One stage at a time, as a sharded model: micro-batch m runs forward through every stage,
    then backward through every stage, before micro-batch m + 1 starts.

    No overlap, one activation stash per stage; Graphcore uses it for debugging and to recompute on a single IPU.
    Every slot holds one action (the weight updates too), so the total time is the sum of all costs.
    """
    return _generate(SPECS["sequential"], stages, micro_batches, training, device_mapping)


def poptorch(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """PopTorch's PipelinedExecution as ipu-teach costs it: Grouped's steps, with PopTorch's rule.

    PopTorch compiles through PopART, whose pipeline runs each micro-batch's forward on stage s in step
    m + s and its backward on the way back, in lock-step like Grouped; it accepts any gradient accumulation
    count of at least 2 x stages - 1 (poptorch checks that rule), not only Grouped's multiples of 2 x stages.
    Interpretation: PopART merges the last stage's forward and backward into one step, so its ramp is one
    step shorter than the Grouped steps costed here (the same work per step once the pipeline is full).
    """
    return _generate(SPECS["poptorch"], stages, micro_batches, training, device_mapping)


def gpipe(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """GPipe (Huang et al. 2019), for comparison: all forwards, then all backwards, event-driven.

    Simple, but every stage stashes all micro-batches before the first backward starts.
    """
    return _generate(SPECS["gpipe"], stages, micro_batches, training, device_mapping)


def one_f_one_b(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """1F1B (PipeDream-flush, Narayanan et al. 2021), for comparison: event-driven, GPU-style.

    Stage s warms up with stages - s forwards, then alternates one forward and one backward, then
    cools down with the remaining backwards. The order is Interleaved's; the difference is timing:
    each action starts as soon as its inputs and its IPU are ready, with no global synchronisation.
    """
    return _generate(SPECS["one_f_one_b"], stages, micro_batches, training, device_mapping)


def eager_1f1b(
    stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
) -> Schedule:
    """Eager 1F1B, for comparison: 1F1B with a longer warm-up, each stage running forwards ahead
    of its first backward so that sending activations to the next IPU overlaps the wait for gradients,
    at the price of stashing about twice as many micro-batches.

    From Qi et al. 2024, "Pipeline Parallelism with Controllable Memory" (PaddlePaddle offers it);
    event-driven, not in Graphcore's PipelineSchedule. Stage s starts with 2 * (stages - s) - 1
    forwards instead of stages - s, then alternates one backward and one forward. The extra forwards
    are sent on while the stage waits for its first gradient, so a slow link delays the pipeline less
    than in 1F1B; the price is about twice 1F1B's stash (2 * (stages - s) - 1 micro-batches on stage
    s). The per-IPU order is Grouped's run without lock-step. Micro-batch m: forward on stage s in
    slot 2(m + s), backward in slot 2(m + 2*stages - 1 - s) - 1.
    """
    return _generate(SPECS["eager_1f1b"], stages, micro_batches, training, device_mapping)


GENERATORS: dict[str, Callable[..., Schedule]] = {
    generate.__name__: generate
    for generate in (grouped, interleaved, sequential, poptorch, gpipe, one_f_one_b, eager_1f1b)
}
"""Every schedule's generator by its registry key, in the registry's order."""


def make_schedule(
    schedule: object,
    stages: int,
    micro_batches: int,
    *,
    training: bool = True,
    device_mapping: Sequence[int] | None = None,
) -> Schedule:
    """Generate a schedule by name: ``"Grouped"``, ``PipelineSchedule.Interleaved``, ``"1F1B"``..."""
    return GENERATORS[schedule_key(schedule)](stages, micro_batches, training=training, device_mapping=device_mapping)


def _generate(spec: ScheduleSpec, stages, micro_batches, training, device_mapping) -> Schedule:
    """The schedule of ``spec`` placed by its slot formula, after checking the numbers against its rules."""
    stages = check_positive("The number of pipeline stages", stages)
    micro_batches = check_positive("The number of micro-batches (gradient accumulation count)", micro_batches)
    check_gradient_accumulation(spec.key, stages, micro_batches, training)
    lockstep = spec.lockstep
    s = np.arange(stages, dtype=np.int64)[:, None]
    m = np.arange(micro_batches, dtype=np.int64)[None, :]
    forward, backward, weight_update = spec.slots(s, m, stages, micro_batches, training)
    stage_grid = np.broadcast_to(s, (stages, micro_batches)).ravel()
    batch_grid = np.broadcast_to(m, (stages, micro_batches)).ravel()
    columns = [(stage_grid, np.full(stage_grid.size, FORWARD), batch_grid, forward.ravel())]
    if training:
        if weight_update is None:  # lock-step: one extra step after all backwards; else as soon as the stage's are done
            weight_update = np.full(stages, backward.max() + 1) if lockstep else backward.max(axis=1) + 1
        columns.append((stage_grid, np.full(stage_grid.size, BACKWARD), batch_grid, backward.ravel()))
        columns.append((s[:, 0], np.full(stages, WEIGHT_UPDATE), np.full(stages, NO_MICRO_BATCH), weight_update))
    stage, kind, batch, slot = (np.concatenate(parts) for parts in zip(*columns))
    return Schedule.from_columns(
        display_name(spec.key), stages, micro_batches, training, lockstep, device_mapping, stage, kind, batch, slot
    )
