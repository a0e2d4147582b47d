"""Schedule generators, one per entry of :mod:`.registry`: Graphcore's Grouped, Interleaved and Sequential, and
schedules from the literature for comparison (GPipe, 1F1B, ...).

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
from .registry import REGISTRY, ScheduleSpec
from .rules import check_gradient_accumulation, check_positive, display_name, schedule_key


def _generator(spec: ScheduleSpec) -> Callable[..., Schedule]:
    """The public generator of a registered schedule, named and documented by its entry."""

    def generate(
        stages: int, micro_batches: int, *, training: bool = True, device_mapping: Sequence[int] | None = None
    ) -> Schedule:
        return _generate(spec.key, stages, micro_batches, training, device_mapping, spec.slots, lockstep=spec.lockstep)

    generate.__name__ = generate.__qualname__ = spec.key
    generate.__doc__ = spec.doc
    return generate


GENERATORS: dict[str, Callable[..., Schedule]] = {spec.key: _generator(spec) for spec in REGISTRY}
grouped, interleaved, sequential = GENERATORS["grouped"], GENERATORS["interleaved"], GENERATORS["sequential"]
gpipe, one_f_one_b = GENERATORS["gpipe"], GENERATORS["one_f_one_b"]


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
    return Schedule.from_columns(
        display_name(key), stages, micro_batches, training, lockstep, device_mapping, stage, kind, batch, slot
    )
