"""Every pipeline schedule in one place: name, display name, aliases, slot formula, accumulation rule.

To add a schedule, write its slot formula here, add one :class:`ScheduleSpec` to ``REGISTRY`` and its
generator, a function named by its key and documented by what it does, to :mod:`.schedules`. The rest reads
this table: the rules (:mod:`.rules`: names, aliases, accumulation), the generators (:mod:`.schedules`:
``make_schedule`` and ``GENERATORS``), the pipeline explorer's list of schedules and
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
    """One pipeline schedule: its name (``key``, the generator's name in :mod:`.schedules`), the name Graphcore or
    the paper writes, its slot formula, whether its IPUs run in lock-step, and ``accumulation(stages,
    training)``, the number the gradient accumulation count must be a multiple of."""

    key: str
    display: str
    slots: Callable
    lockstep: bool
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
    ),
    ScheduleSpec(
        "interleaved",
        "Interleaved",
        _alternating_slots,
        lockstep=True,
        graphcore=True,
        accumulation=lambda stages, training: stages,
    ),
    ScheduleSpec(
        "sequential",
        "Sequential",
        _sequential_slots,
        lockstep=True,
        graphcore=True,
    ),
    ScheduleSpec(
        "poptorch",
        "PopTorch",
        _grouped_slots,
        lockstep=True,
        aliases=("pipelined_execution", "popart"),
    ),
    ScheduleSpec(
        "gpipe",
        "GPipe",
        _gpipe_slots,
        lockstep=False,
    ),
    ScheduleSpec(
        "one_f_one_b",
        "1F1B",
        _alternating_slots,
        lockstep=False,
        aliases=("1f1b", "pipedream", "pipedream_flush"),
    ),
    ScheduleSpec(
        "eager_1f1b",
        "Eager 1F1B",
        _eager_slots,
        lockstep=False,
        aliases=("eager1f1b",),
    ),
)
SPECS: dict[str, ScheduleSpec] = {spec.key: spec for spec in REGISTRY}
GRAPHCORE_SPECS: tuple[ScheduleSpec, ...] = tuple(spec for spec in REGISTRY if spec.graphcore)
