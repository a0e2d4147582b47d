"""Check that a schedule can run: complete, in dependency order, one action at a time per IPU.

Dependencies: micro-batch m's forward on stage s comes after its forward on stage s - 1 (the
activations), its backward on stage s after its forward on stage s (the stash) and after its
backward on stage s + 1 (the gradient), and a stage's weight update after all its backwards.
A dependency across stages needs a strictly later slot (the data crosses an IPU-Link between
steps); on the same stage the same slot is fine, because actions sharing a slot run in row order.
Errors name the first violated action (lowest slot) and say what to change. All checks are numpy.
"""

from __future__ import annotations

import numpy as np

from .actions import BACKWARD, FORWARD, NO_MICRO_BATCH, WEIGHT_UPDATE, Schedule

_TIME_TOLERANCE = 1e-12  # seconds; float sums of durations may differ by rounding


class ScheduleError(ValueError):
    """A schedule that cannot run as given; the message names the first offending action."""


def validate(schedule: Schedule) -> Schedule:
    """Raise :class:`ScheduleError` unless the schedule is complete and respects every dependency.

    Returns the schedule, so ``validate(grouped(4, 16))`` can be used inline.
    """
    _check_columns(schedule)
    _check_each_action_once(schedule)
    _check_dependencies(schedule)
    return schedule


def validate_timeline(timeline) -> None:
    """Raise :class:`ScheduleError` if a timed schedule overlaps two actions on one IPU or starts an
    action before an action it depends on has ended (the timing counterpart of :func:`validate`)."""
    schedule, start, end = timeline.schedule, timeline.start, timeline.end
    ipu = schedule.ipu
    order = np.lexsort((start, ipu))
    same_ipu = ipu[order][1:] == ipu[order][:-1]
    overlap = same_ipu & (start[order][1:] < end[order][:-1] - _TIME_TOLERANCE)
    if overlap.any():
        first = int(np.argmax(overlap))
        later, earlier = schedule.action(int(order[first + 1])), schedule.action(int(order[first]))
        raise ScheduleError(
            f"{later.describe()} starts at {start[order[first + 1]]:.6g} s while "
            f"{earlier} is still running on IPU {later.ipu} (until {end[order[first]]:.6g} s): "
            "an IPU runs one action at a time."
        )
    for row, before in _dependency_pairs(schedule):
        late = start[row] < end[before] - _TIME_TOLERANCE
        if late.any():
            first = int(np.argmin(np.where(late, start[row], np.inf)))
            action, needed = schedule.action(int(row[first])), schedule.action(int(before[first]))
            raise ScheduleError(
                f"{action.describe()} starts at {start[row[first]]:.6g} s, before {needed} on "
                f"stage {needed.stage} ends at {end[before[first]]:.6g} s."
            )


def _check_columns(schedule: Schedule) -> None:
    name = f"Schedule {schedule.name!r}"
    columns = (schedule.stage, schedule.kind, schedule.micro_batch, schedule.slot)
    if len({column.shape for column in columns}) != 1:
        raise ScheduleError(f"{name}: the stage, kind, micro_batch and slot columns must have equal lengths.")
    problems = [
        ((schedule.stage < 0) | (schedule.stage >= schedule.stages), f"uses a stage outside 0..{schedule.stages - 1}"),
        (
            (schedule.kind < FORWARD) | (schedule.kind > WEIGHT_UPDATE),
            "has a kind code that is not F (0), B (1) or WU (2)",
        ),
        (schedule.slot < 0, "has a negative slot"),
        (
            (schedule.kind != WEIGHT_UPDATE)
            & ((schedule.micro_batch < 0) | (schedule.micro_batch >= schedule.micro_batches)),
            f"uses a micro-batch outside 0..{schedule.micro_batches - 1}",
        ),
        (
            (schedule.kind == WEIGHT_UPDATE) & (schedule.micro_batch != NO_MICRO_BATCH),
            f"gives a weight update a micro-batch (use {NO_MICRO_BATCH}: it covers all of them)",
        ),
    ]
    if not schedule.training:
        problems.append((schedule.kind != FORWARD, "is for inference but has a backward or weight update"))
    for bad, what in problems:
        if bad.any():
            row = int(np.argmax(bad))
            raise ScheduleError(
                f"{name} {what}: row {row} (stage {schedule.stage[row]}, kind code "
                f"{schedule.kind[row]}, micro-batch {schedule.micro_batch[row]}, slot {schedule.slot[row]})."
            )
    if np.any(np.diff(schedule.slot) < 0):
        row = int(np.argmax(np.diff(schedule.slot) < 0)) + 1
        raise ScheduleError(
            f"{name}: rows must be in execution order (slots never decreasing), but "
            f"{schedule.action(row).describe()} follows slot {schedule.slot[row - 1]}; "
            "build it with Schedule.from_columns or Schedule.from_actions, which sort the rows."
        )


def _check_each_action_once(schedule: Schedule) -> None:
    stages, batches = schedule.stages, schedule.micro_batches
    kinds = (FORWARD, BACKWARD) if schedule.training else (FORWARD,)
    for kind in kinds:
        chosen = schedule.kind == kind
        counts = np.bincount(
            schedule.stage[chosen] * batches + schedule.micro_batch[chosen], minlength=stages * batches
        )
        _report_count(schedule, counts, kind, lambda cell: (cell // batches, cell % batches))
    if schedule.training:
        chosen = schedule.kind == WEIGHT_UPDATE
        counts = np.bincount(schedule.stage[chosen], minlength=stages)
        _report_count(schedule, counts, WEIGHT_UPDATE, lambda cell: (cell, None))


def _report_count(schedule: Schedule, counts: np.ndarray, kind: int, cell_to_stage_batch) -> None:
    wrong = np.flatnonzero(counts != 1)
    if wrong.size == 0:
        return
    stage, batch = cell_to_stage_batch(int(wrong[0]))
    label = {FORWARD: f"F{batch}", BACKWARD: f"B{batch}", WEIGHT_UPDATE: "WU"}[kind]
    rule = (
        "every stage runs exactly one weight update, after its backwards"
        if kind == WEIGHT_UPDATE
        else "every micro-batch runs its forward and backward exactly once on every stage"
    )
    count = int(counts[wrong[0]])
    found = f"never runs {label}" if count == 0 else f"runs {label} {count} times"
    raise ScheduleError(f"Schedule {schedule.name!r} {found} on stage {stage}: {rule}.")


def _dependency_pairs(schedule: Schedule):
    """(rows, rows they depend on) pairs for each dependency kind; assumes each action appears once."""
    forward = schedule.rows(FORWARD)
    yield forward[1:].ravel(), forward[:-1].ravel()
    if schedule.training:
        backward = schedule.rows(BACKWARD)
        yield backward.ravel(), forward.ravel()
        yield backward[:-1].ravel(), backward[1:].ravel()
        weight_update = np.full(schedule.stages, -1, dtype=np.int64)
        updates = np.flatnonzero(schedule.kind == WEIGHT_UPDATE)
        weight_update[schedule.stage[updates]] = updates
        last_backward = backward[np.arange(schedule.stages), np.argmax(schedule.slot[backward], axis=1)]
        yield weight_update, last_backward


def _check_dependencies(schedule: Schedule) -> None:
    slot = schedule.slot
    worst = None  # (slot of the violating action, message)
    for rows, before in _dependency_pairs(schedule):
        cross_stage = schedule.stage[rows] != schedule.stage[before]
        bad = np.where(cross_stage, slot[rows] <= slot[before], slot[rows] < slot[before])
        if not bad.any():
            continue
        first = int(np.argmin(np.where(bad, slot[rows], np.iinfo(np.int64).max)))
        if worst is None or slot[rows[first]] < worst[0]:
            action, needed = schedule.action(int(rows[first])), schedule.action(int(before[first]))
            when = "a later slot than" if needed.stage != action.stage else "the same or a later slot than"
            worst = (
                slot[rows[first]],
                f"Schedule {schedule.name!r}: {action.describe()} must run in {when} {needed} on stage "
                f"{needed.stage} (slot {needed.slot}), which it depends on; move it to slot "
                f"{needed.slot + int(needed.stage != action.stage)} or later.",
            )
    if worst is not None:
        raise ScheduleError(worst[1])
