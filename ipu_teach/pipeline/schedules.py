"""Schedule generators: Graphcore's Grouped, Interleaved and Sequential, plus GPipe and 1F1B.

Each generator takes plain numbers (stages, micro-batches = the gradient accumulation count,
training or inference) and returns a :class:`~ipu_teach.pipeline.actions.Schedule`. It places
every action in a slot with a closed formula on numpy arrays, so large pipelines cost no Python loop.
Stage ``s`` runs on IPU ``s`` unless ``device_mapping`` says otherwise. In training each stage ends
with one weight update, after the backward passes of all micro-batches (gradient accumulation).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .actions import BACKWARD, FORWARD, NO_MICRO_BATCH, WEIGHT_UPDATE, Schedule
from .rules import check_gradient_accumulation, check_positive, display_name, schedule_key


def grouped(stages: int, micro_batches: int, *, training: bool = True,
            device_mapping: Sequence[int] | None = None) -> Schedule:
    """Graphcore's default: in each step every IPU runs one forward, then one backward.

    Forward passes are grouped together and backward passes grouped together; the IPUs synchronise
    after every step (lock-step), so a step lasts as long as its slowest IPU. The pipeline has 2 x
    stages steps of depth: micro-batch m's forward reaches stage s in step m + s and its backward
    in step m + 2*stages - 1 - s, so stage s stashes activations of 2 * (stages - s) micro-batches.
    Ramp-up and ramp-down last 2 * stages - 1 steps each. In inference: forwards only, step m + s.
    """
    return _generate("grouped", stages, micro_batches, training, device_mapping, _grouped_slots, lockstep=True)


def interleaved(stages: int, micro_batches: int, *, training: bool = True,
                device_mapping: Sequence[int] | None = None) -> Schedule:
    """Graphcore's Interleaved: each IPU alternates one forward and one backward, one per step.

    A backward runs as soon as its activations exist, so stage s stashes only stages - s
    micro-batches (half of Grouped). Interpretation: like all of Graphcore's pipelines it runs in
    lock-step (the IPUs synchronise after every step), and in a step some IPUs run forwards while
    others run backwards, so every step lasts max(forward, backward): slower than Grouped when the
    two costs differ. Same per-IPU order as 1F1B, which instead runs event-driven.
    Micro-batch m: forward on stage s in step 2m + s, backward in step 2m + 2*stages - 1 - s.
    In inference there is nothing to interleave: forwards only, step m + s, as Grouped.
    """
    return _generate("interleaved", stages, micro_batches, training, device_mapping, _alternating_slots,
                     lockstep=True)


def sequential(stages: int, micro_batches: int, *, training: bool = True,
               device_mapping: Sequence[int] | None = None) -> Schedule:
    """One stage at a time, as a sharded model: micro-batch m runs forward through every stage,
    then backward through every stage, before micro-batch m + 1 starts. No overlap, one activation
    stash per stage; Graphcore uses it for debugging and to recompute on a single IPU.
    Every slot holds one action (the weight updates too), so the total time is the sum of all costs.
    """
    return _generate("sequential", stages, micro_batches, training, device_mapping, _sequential_slots,
                     lockstep=True)


def gpipe(stages: int, micro_batches: int, *, training: bool = True,
          device_mapping: Sequence[int] | None = None) -> Schedule:
    """GPipe (Huang et al. 2019), for comparison: all forwards, then all backwards, event-driven.

    Simple, but every stage stashes all micro-batches before the first backward starts.
    """
    return _generate("gpipe", stages, micro_batches, training, device_mapping, _gpipe_slots, lockstep=False)


def one_f_one_b(stages: int, micro_batches: int, *, training: bool = True,
                device_mapping: Sequence[int] | None = None) -> Schedule:
    """1F1B (PipeDream-flush, Narayanan et al. 2021), for comparison: event-driven, GPU-style.

    Stage s warms up with stages - s forwards, then alternates one forward and one backward, then
    cools down with the remaining backwards. The order is Interleaved's; the difference is timing:
    each action starts as soon as its inputs and its IPU are ready, with no global synchronisation.
    """
    return _generate("one_f_one_b", stages, micro_batches, training, device_mapping, _alternating_slots,
                     lockstep=False)


GENERATORS: dict[str, Callable[..., Schedule]] = {
    "grouped": grouped, "interleaved": interleaved, "sequential": sequential,
    "gpipe": gpipe, "one_f_one_b": one_f_one_b}


def make_schedule(schedule: object, stages: int, micro_batches: int, *, training: bool = True,
                  device_mapping: Sequence[int] | None = None) -> Schedule:
    """Generate a schedule by name: ``"Grouped"``, ``PipelineSchedule.Interleaved``, ``"1F1B"``..."""
    return GENERATORS[schedule_key(schedule)](stages, micro_batches, training=training,
                                              device_mapping=device_mapping)


# Slot formulas: each takes stage and micro-batch index arrays of shape (stages, 1) and (1, M)
# and returns the forward slots, the backward slots (None in inference) and the weight-update slots
# (None for the default: see _generate).

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


def _generate(key, stages, micro_batches, training, device_mapping, slots, *, lockstep: bool) -> Schedule:
    stages = check_positive("The number of pipeline stages", stages)
    micro_batches = check_positive("The number of micro-batches (gradient accumulation count)", micro_batches)
    check_gradient_accumulation(key, stages, micro_batches, training)
    s = np.arange(stages, dtype=np.int64)[:, None]
    m = np.arange(micro_batches, dtype=np.int64)[None, :]
    forward, backward, weight_update = slots(s, m, stages, micro_batches, training)
    stage_grid = np.broadcast_to(s, (stages, micro_batches)).ravel()
    batch_grid = np.broadcast_to(m, (stages, micro_batches)).ravel()
    columns = [(stage_grid, np.full(stage_grid.size, FORWARD), batch_grid, forward.ravel())]
    if training:
        if weight_update is None:  # lock-step: one extra step after all backwards; else as soon as the stage's are done
            weight_update = np.full(stages, backward.max() + 1) if lockstep else backward.max(axis=1) + 1
        columns.append((stage_grid, np.full(stage_grid.size, BACKWARD), batch_grid, backward.ravel()))
        columns.append((s[:, 0], np.full(stages, WEIGHT_UPDATE), np.full(stages, NO_MICRO_BATCH), weight_update))
    stage, kind, batch, slot = (np.concatenate(parts) for parts in zip(*columns))
    return Schedule.from_columns(display_name(key), stages, micro_batches, training, lockstep, device_mapping,
                                 stage, kind, batch, slot)
