"""Time a schedule with the cost model: when each action starts and ends, in simulated seconds.

Inputs are plain numbers per stage: forward and backward seconds per micro-batch, weight-update
seconds, and the bytes of activations a stage sends to the next (the gradient coming back has the
same size). A transfer between stages on different IPUs costs ``bytes / link bandwidth + latency``
over IPU-Links; it occupies the link, not the IPU. Recomputation adds a forward before each backward.

Two ways to run, chosen by ``Schedule.lockstep``:

* lock-step (Graphcore's BSP pipelines: Grouped, Interleaved, Sequential): all IPUs synchronise after
  every slot, so a slot lasts as long as its busiest IPU plus the longest transfer sent in it, plus the
  slot's sync and the transfer's (``StageCosts.slot_sync_s``, the BSP Engine's cross-IPU sync for a Keras
  pipeline, which the Engine runs as the same program);
* event-driven (GPipe, 1F1B): each action starts once its IPU is free and its inputs have arrived.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

from ..hardware import MK2
from .actions import BACKWARD, FORWARD, WEIGHT_UPDATE, Action, Schedule


@dataclass(frozen=True)
class StageCosts:
    """Per-stage costs of one micro-batch, in simulated seconds (and bytes for transfers).

    ``transfer_bytes[s]`` is what stage s sends to stage s + 1 (``stages - 1`` entries). Link
    figures default to the Mk2 IPU's IPU-Links (``ipu_teach.hardware.MK2``).
    """

    forward: Sequence[float]
    backward: Sequence[float]
    weight_update: Sequence[float] | None = None
    transfer_bytes: Sequence[float] | None = None
    link_bytes_per_s: float = MK2.ipu_link_bytes_per_s
    link_latency_s: float = MK2.ipu_link_latency_s
    slot_sync_s: float = 0.0
    """Seconds of the sync that closes each lock-step slot, paid again by a slot that sends a transfer (the
    copy is a superstep of its own); 0 for a what-if schedule, the cross-IPU sync for a Keras pipeline."""

    def __post_init__(self):
        stages = np.size(self.forward)
        expected = {
            "forward": stages,
            "backward": stages,
            "weight_update": stages,
            "transfer_bytes": max(stages - 1, 0),
        }
        for name, length in expected.items():
            value = getattr(self, name)
            values = tuple(float(v) for v in (np.zeros(length) if value is None else np.ravel(value)))
            if len(values) != length or not all(np.isfinite(v) and v >= 0 for v in values):
                raise ValueError(
                    f"StageCosts.{name} needs {length} finite non-negative numbers (one per "
                    f"{'stage boundary' if name == 'transfer_bytes' else 'stage'}), got {value!r}."
                )
            object.__setattr__(self, name, values)
        if stages < 1:
            raise ValueError("StageCosts needs the costs of at least one stage.")
        if not self.link_bytes_per_s > 0 or not self.link_latency_s >= 0:
            raise ValueError(
                f"StageCosts needs link_bytes_per_s > 0 and link_latency_s >= 0, got "
                f"{self.link_bytes_per_s!r} and {self.link_latency_s!r}."
            )
        if not (np.isfinite(self.slot_sync_s) and self.slot_sync_s >= 0):
            raise ValueError(f"StageCosts needs a finite slot_sync_s >= 0, got {self.slot_sync_s!r}.")

    @classmethod
    def uniform(
        cls,
        stages: int,
        forward: float = 1.0,
        backward: float = 2.0,
        weight_update: float = 0.0,
        transfer_bytes: float = 0.0,
        **link,
    ) -> "StageCosts":
        """Every stage costs the same: handy for the explorer's forward:backward ratio."""
        return cls(
            forward=[forward] * stages,
            backward=[backward] * stages,
            weight_update=[weight_update] * stages,
            transfer_bytes=[transfer_bytes] * (stages - 1),
            **link,
        )

    @property
    def stages(self) -> int:
        return len(self.forward)

    @property
    def transfer_seconds(self) -> np.ndarray:
        """Seconds to send one micro-batch's activations over each stage boundary (0 if nothing is sent)."""
        sent = np.asarray(self.transfer_bytes)
        return np.where(sent > 0, sent / self.link_bytes_per_s + self.link_latency_s, 0.0)


@dataclass(frozen=True)
class TimedAction:
    """An action with its simulated start and end (seconds)."""

    action: Action
    start: float
    end: float


@dataclass(frozen=True, eq=False)
class ScheduleTiming:
    """A timed schedule: ``start[i]``/``end[i]`` for row i of ``schedule``; for lock-step runs also
    each slot's start and end (empty arrays for event-driven runs)."""

    schedule: Schedule
    costs: StageCosts
    recompute: bool
    lockstep: bool
    start: np.ndarray
    end: np.ndarray
    slot_start: np.ndarray = field(default_factory=lambda: np.zeros(0))
    slot_end: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def total(self) -> float:
        """Simulated seconds from the first action's start to the end of the run."""
        candidates = [0.0]
        if self.end.size:
            candidates.append(float(self.end.max()))
        if self.slot_end.size:  # a lock-step run ends with its last slot, transfers included
            candidates.append(float(self.slot_end[-1]))
        return max(candidates)

    @property
    def durations(self) -> np.ndarray:
        return self.end - self.start

    def busy_per_ipu(self) -> np.ndarray:
        """Seconds each IPU spends computing (transfers and waiting excluded)."""
        return np.bincount(self.schedule.ipu, weights=self.durations, minlength=self.schedule.ipus)

    def timed_actions(self) -> Iterator[TimedAction]:
        return (
            TimedAction(action, start, end)
            for action, start, end in zip(self.schedule.actions(), self.start.tolist(), self.end.tolist())
        )


def time_schedule(
    schedule: Schedule, costs: StageCosts, *, recompute: bool = False, lockstep: bool | None = None
) -> ScheduleTiming:
    """Time every action of ``schedule``. ``lockstep`` overrides the schedule's own mode, to ask
    "what if Grouped did not synchronise after every step?"."""
    if costs.stages != schedule.stages:
        raise ValueError(
            f"StageCosts has {costs.stages} stages but schedule {schedule.name!r} has "
            f"{schedule.stages}; give one cost per stage."
        )
    lockstep = schedule.lockstep if lockstep is None else bool(lockstep)
    durations = _durations(schedule, costs, recompute)
    sent = _transfer_after(schedule, costs)
    if lockstep:
        start, end, slot_start, slot_end = _lockstep(schedule, durations, sent, costs.slot_sync_s)
        return ScheduleTiming(schedule, costs, recompute, True, start, end, slot_start, slot_end)
    start, end = _event_driven(schedule, durations, costs)
    return ScheduleTiming(schedule, costs, recompute, False, start, end)


def _durations(schedule: Schedule, costs: StageCosts, recompute: bool) -> np.ndarray:
    backward = np.asarray(costs.backward) + (np.asarray(costs.forward) if recompute else 0.0)
    per_kind = np.stack([np.asarray(costs.forward), backward, np.asarray(costs.weight_update)])
    return per_kind[schedule.kind, schedule.stage]


def _crossing(schedule: Schedule) -> np.ndarray:
    """Whether boundary s -> s + 1 joins two different IPUs (so a transfer is needed)."""
    mapping = np.asarray(schedule.device_mapping)
    return mapping[1:] != mapping[:-1]


def _boundary_seconds(schedule: Schedule, costs: StageCosts) -> np.ndarray:
    """Transfer seconds per boundary, padded with a zero at both ends (no stage before 0 or after the last)."""
    return np.concatenate([[0.0], costs.transfer_seconds * _crossing(schedule), [0.0]])


def _transfer_after(schedule: Schedule, costs: StageCosts) -> np.ndarray:
    """Seconds of the transfer each action sends: a forward to the next stage, a backward to the previous."""
    boundary = _boundary_seconds(schedule, costs)
    forward_send = boundary[schedule.stage + 1]  # boundary index s + 1 is the link s -> s + 1
    backward_send = boundary[schedule.stage]  # boundary index s is the link s - 1 -> s
    return np.select([schedule.kind == FORWARD, schedule.kind == BACKWARD], [forward_send, backward_send], 0.0)


def _lockstep(schedule: Schedule, durations: np.ndarray, sent: np.ndarray, sync: float = 0.0):
    slots, ipus = schedule.slots, schedule.ipus
    load = np.zeros((slots, ipus))
    np.add.at(load, (schedule.slot, schedule.ipu), durations)
    exchange = np.zeros(slots)
    np.maximum.at(exchange, schedule.slot, sent)
    slot_length = load.max(axis=1) + exchange + sync * (1 + (exchange > 0))
    slot_end = np.cumsum(slot_length)
    slot_start = slot_end - slot_length
    # Actions sharing a slot and an IPU run back to back in row order: offset = earlier durations in the group.
    key = schedule.slot * ipus + schedule.ipu
    order = np.argsort(key, kind="stable")
    ordered = durations[order]
    before = np.cumsum(ordered) - ordered
    group_first = np.flatnonzero(np.r_[True, key[order][1:] != key[order][:-1]])
    group_of = np.cumsum(np.r_[True, key[order][1:] != key[order][:-1]]) - 1
    offset = np.empty_like(durations)
    offset[order] = before - before[group_first][group_of]
    start = slot_start[schedule.slot] + offset
    return start, start + durations, slot_start, slot_end


def _event_driven(schedule: Schedule, durations: np.ndarray, costs: StageCosts):
    """Rows are in a dependency-respecting order (see validate), so one pass suffices."""
    stages, batches = schedule.stages, schedule.micro_batches
    link = _boundary_seconds(schedule, costs).tolist()  # link[s] joins stage s - 1 and stage s
    forward_end = [0.0] * (stages * batches)
    backward_end = [0.0] * (stages * batches)
    stage_backwards_end = [0.0] * stages
    ipu_free = [0.0] * schedule.ipus
    start = [0.0] * len(schedule)
    for row, (stage, kind, batch, ipu, duration) in enumerate(
        zip(
            schedule.stage.tolist(),
            schedule.kind.tolist(),
            schedule.micro_batch.tolist(),
            schedule.ipu.tolist(),
            durations.tolist(),
        )
    ):
        ready = ipu_free[ipu]
        cell = stage * batches + batch
        if kind == FORWARD:
            if stage > 0:
                ready = max(ready, forward_end[cell - batches] + link[stage])
            forward_end[cell] = ready + duration
        elif kind == BACKWARD:
            ready = max(ready, forward_end[cell])
            if stage < stages - 1:
                ready = max(ready, backward_end[cell + batches] + link[stage + 1])
            backward_end[cell] = ready + duration
            stage_backwards_end[stage] = max(stage_backwards_end[stage], ready + duration)
        elif kind == WEIGHT_UPDATE:
            ready = max(ready, stage_backwards_end[stage])
        start[row] = ready
        ipu_free[ipu] = ready + duration
    start = np.asarray(start)
    return start, start + durations
