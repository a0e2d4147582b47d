"""What a schedule costs: utilisation, bubbles, phases and stashed activations.

Utilisation is the fraction of IPU time spent computing: busy seconds / (IPUs x total seconds);
the bubble fraction is the rest. Phases (see :func:`phases`) split the run into ramp-up, main and
ramp-down. The stash of a stage is the number of micro-batches whose forward has run there but
whose backward has not: their activations must stay in memory until the backward needs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .actions import BACKWARD, FORWARD, WEIGHT_UPDATE, Schedule
from .timing import ScheduleTiming


@dataclass(frozen=True)
class Phases:
    """Seconds of ramp-up, main phase and ramp-down (they add up to the total), and where main starts and ends."""

    ramp_up: float
    main: float
    ramp_down: float
    main_start: float
    main_end: float


@dataclass(frozen=True)
class PipelineMetrics:
    """Everything the explorer shows about one timed schedule, as plain numbers."""

    schedule: str
    stages: int
    micro_batches: int
    ipus: int
    total_seconds: float
    utilisation: float
    bubble_fraction: float
    utilisation_per_ipu: tuple[float, ...]
    phases: Phases
    peak_stash: tuple[int, ...]
    stash_bytes: tuple[float, ...] | None


def utilisation_per_ipu(timeline: ScheduleTiming) -> np.ndarray:
    """Busy seconds of each IPU over the total."""
    total = timeline.total
    busy = timeline.busy_per_ipu()
    return busy / total if total > 0 else np.zeros_like(busy)


def utilisation(timeline: ScheduleTiming) -> float:
    """Busy seconds of all IPUs / (IPUs x total seconds)."""
    return float(utilisation_per_ipu(timeline).mean())


def bubble_fraction(timeline: ScheduleTiming) -> float:
    """The fraction of IPU time spent idle (waiting for inputs, a sync or a transfer)."""
    return 1.0 - utilisation(timeline)


def phases(timeline: ScheduleTiming) -> Phases:
    """Split the run into ramp-up, main phase and ramp-down.

    Interpretation: the main phase is the steady state, when every stage has work in both
    directions: it starts when the last stage to do so begins its first backward (stage 0; in
    inference, when the last stage begins its first forward: the pipeline is full) and ends when
    the first stage to do so finishes its last forward (stage 0: no new micro-batch enters).
    Lock-step runs snap these to slot boundaries. A schedule that never reaches a steady state
    (GPipe, or too few micro-batches) gets a zero-length main phase where its forwards end.
    Sequential never overlaps stages: its "main phase" is just the micro-batches between the first
    and the last, and its utilisation stays 1 / stages throughout.
    """
    schedule, start, end = timeline.schedule, timeline.start, timeline.end
    total = timeline.total
    if len(schedule) == 0:
        return Phases(0.0, 0.0, 0.0, 0.0, 0.0)
    entering = schedule.kind == (BACKWARD if schedule.training else FORWARD)
    first_entry = np.full(schedule.stages, np.inf)
    np.minimum.at(first_entry, schedule.stage[entering], start[entering])
    forwards = schedule.kind == FORWARD
    last_forward = np.full(schedule.stages, -np.inf)
    np.maximum.at(last_forward, schedule.stage[forwards], end[forwards])
    main_start, main_end = float(first_entry.max()), float(last_forward.min())
    if timeline.lockstep:
        main_start = _snap(main_start, timeline.slot_start, timeline.slot_end, at_start=True)
        main_end = _snap(main_end, timeline.slot_start, timeline.slot_end, at_start=False)
    main_start = min(main_start, main_end)
    return Phases(
        ramp_up=main_start,
        main=main_end - main_start,
        ramp_down=total - main_end,
        main_start=main_start,
        main_end=main_end,
    )


def _snap(moment: float, slot_start: np.ndarray, slot_end: np.ndarray, *, at_start: bool) -> float:
    """The start (or end) of the slot containing ``moment``."""
    slot = int(np.searchsorted(slot_end, moment, side="right" if at_start else "left"))
    slot = min(slot, slot_end.size - 1)
    return float(slot_start[slot] if at_start else slot_end[slot])


def peak_stash(schedule: Schedule) -> np.ndarray:
    """Per stage, the most micro-batches whose forward has run but whose backward has not finished.

    Counted in each stage's execution order: a forward adds one, a backward removes one after it
    has run (its stash is in use while it runs). Inference keeps no stash: zero everywhere.
    """
    if not schedule.training:
        return np.zeros(schedule.stages, dtype=np.int64)
    passes = schedule.kind != WEIGHT_UPDATE  # weight updates do not touch the stash
    order = np.argsort(schedule.stage[passes], kind="stable")  # rows are in execution order: keep it per stage
    stage = schedule.stage[passes][order]
    change = np.where(schedule.kind[passes][order] == FORWARD, 1, -1)
    running = np.cumsum(change)
    before_stage = (running - change)[np.searchsorted(stage, stage)]  # the count when the stage began
    peak = np.zeros(schedule.stages, dtype=np.int64)
    np.maximum.at(peak, stage, running - before_stage)
    return peak


def stash_bytes(
    schedule: Schedule,
    activation_bytes: Sequence[float],
    input_bytes: Sequence[float] | None = None,
    recompute: bool = False,
) -> np.ndarray:
    """Peak bytes of stashed activations per stage.

    ``activation_bytes[s]``: what stage s keeps of one micro-batch for its backward pass;
    ``input_bytes[s]``: the size of one micro-batch's input to stage s. With recomputation only the
    stage input is stashed (the rest is recomputed just before the backward), trading time for memory.
    """
    chosen = input_bytes if recompute else activation_bytes
    name = "input_bytes" if recompute else "activation_bytes"
    if chosen is None:
        raise ValueError(
            "stash_bytes with recompute=True needs input_bytes: the size of each stage's input for one micro-batch."
        )
    per_batch = np.asarray(chosen, dtype=float).ravel()
    if per_batch.size != schedule.stages or np.any(per_batch < 0):
        raise ValueError(f"{name} needs {schedule.stages} non-negative numbers (one per stage), got {list(chosen)}.")
    return peak_stash(schedule) * per_batch


def summarise(
    timeline: ScheduleTiming,
    activation_bytes: Sequence[float] | None = None,
    input_bytes: Sequence[float] | None = None,
) -> PipelineMetrics:
    """All metrics of a timed schedule; stash bytes only when ``activation_bytes`` are given."""
    return metrics_of(
        timeline.schedule,
        timeline.schedule.micro_batches,
        timeline.total,
        utilisation_per_ipu(timeline),
        phases(timeline),
        stash_of(timeline.schedule, activation_bytes, input_bytes, timeline.recompute),
    )


def stash_of(schedule: Schedule, activation_bytes, input_bytes, recompute: bool) -> tuple | None:
    """Peak stashed bytes per stage as plain floats, or None when no ``activation_bytes`` are given."""
    if activation_bytes is None:
        return None
    return tuple(float(b) for b in stash_bytes(schedule, activation_bytes, input_bytes, recompute))


def metrics_of(schedule: Schedule, micro_batches, total, per_ipu, spans, stash) -> PipelineMetrics:
    """The metrics record of a run of ``schedule``'s order over ``micro_batches`` taking ``total`` seconds
    (a timed run's, or one folded from a period: see ``folding``)."""
    return PipelineMetrics(
        schedule=schedule.name,
        stages=schedule.stages,
        micro_batches=micro_batches,
        ipus=schedule.ipus,
        total_seconds=total,
        utilisation=float(per_ipu.mean()),
        bubble_fraction=1.0 - float(per_ipu.mean()),
        utilisation_per_ipu=tuple(float(u) for u in per_ipu),
        phases=spans,
        peak_stash=tuple(int(n) for n in peak_stash(schedule)),
        stash_bytes=stash,
    )
