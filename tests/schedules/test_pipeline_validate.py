"""The validator catches deliberately broken schedules and names the first offending action."""

import dataclasses

import numpy as np
import pytest

from ipu_teach import schedules
from ipu_teach.schedules.actions import BACKWARD, FORWARD, WEIGHT_UPDATE


def _rebuild(schedule, keep=None, **changes):
    """The schedule's columns with some rows dropped (``keep`` mask) or values changed, re-sorted."""
    columns = {name: getattr(schedule, name).copy() for name in ("stage", "kind", "micro_batch", "slot")}
    for name, (row, value) in changes.items():
        columns[name][row] = value
    if keep is not None:
        columns = {name: column[keep] for name, column in columns.items()}
    return schedules.Schedule.from_columns(
        "broken",
        schedule.stages,
        schedule.micro_batches,
        schedule.training,
        schedule.lockstep,
        schedule.device_mapping,
        **columns,
    )


def _row(schedule, kind, stage, micro_batch):
    return int(
        np.flatnonzero((schedule.kind == kind) & (schedule.stage == stage) & (schedule.micro_batch == micro_batch))[0]
    )


def test_backward_before_the_next_stages_backward_is_caught():
    good = schedules.grouped(2, 4)
    broken = _rebuild(good, slot=(_row(good, BACKWARD, 0, 1), 2))  # B1 on stage 0 before B1 on stage 1 (slot 3)
    with pytest.raises(
        schedules.ScheduleError,
        match=r"B1 \(backward of micro-batch 1 on stage 0, IPU 0, slot 2\) "
        r"must run in a later slot than B1 on stage 1 \(slot 3\).*slot 4",
    ):
        schedules.validate(broken)


def test_forward_before_its_input_is_caught():
    good = schedules.interleaved(2, 4)
    broken = _rebuild(good, slot=(_row(good, FORWARD, 1, 3), 5))  # F3 on stage 0 runs in slot 6
    with pytest.raises(schedules.ScheduleError, match=r"F3 \(forward of micro-batch 3 on stage 1, IPU 1, slot 5\)"):
        schedules.validate(broken)


def test_the_violation_in_the_earliest_slot_is_reported_first():
    good = schedules.interleaved(2, 4)
    late_forward = _rebuild(good, slot=(_row(good, FORWARD, 1, 3), 5))
    both = _rebuild(late_forward, slot=(_row(late_forward, BACKWARD, 0, 0), 1))  # B0 on stage 1 runs in slot 2
    with pytest.raises(schedules.ScheduleError, match=r"^Schedule 'broken': B0 \(backward of micro-batch 0 on stage 0"):
        schedules.validate(both)


def test_weight_update_before_the_last_backward_is_caught():
    good = schedules.one_f_one_b(2, 2)
    update = int(np.flatnonzero((good.kind == WEIGHT_UPDATE) & (good.stage == 0))[0])
    with pytest.raises(schedules.ScheduleError, match=r"WU \(weight update on stage 0.*B1 on stage 0"):
        schedules.validate(_rebuild(good, slot=(update, 1)))


def test_missing_and_duplicated_actions_are_caught():
    good = schedules.gpipe(3, 4)
    missing = np.ones(len(good), bool)
    missing[_row(good, BACKWARD, 2, 1)] = False
    with pytest.raises(
        schedules.ScheduleError,
        match="never runs B1 on stage 2: every micro-batch runs its forward and backward exactly once",
    ):
        schedules.validate(_rebuild(good, keep=missing))
    with pytest.raises(schedules.ScheduleError, match="runs F0 2 times on stage 1"):
        schedules.validate(_rebuild(good, micro_batch=(_row(good, FORWARD, 1, 3), 0)))
    no_update = good.kind != WEIGHT_UPDATE
    with pytest.raises(schedules.ScheduleError, match="never runs WU on stage 0"):
        schedules.validate(_rebuild(good, keep=no_update))


def test_out_of_range_and_unsorted_rows_are_caught():
    good = schedules.sequential(2, 2)
    with pytest.raises(schedules.ScheduleError, match="uses a stage outside 0..1"):
        schedules.validate(_rebuild(good, stage=(0, 5)))
    with pytest.raises(schedules.ScheduleError, match="is for inference but has a backward"):
        schedules.validate(dataclasses.replace(good, training=False))
    unsorted = dataclasses.replace(good, slot=good.slot[::-1].copy())
    with pytest.raises(schedules.ScheduleError, match="rows must be in execution order"):
        schedules.validate(unsorted)


def test_timeline_validation_catches_overlap_and_early_starts():
    timeline = schedules.time_schedule(schedules.grouped(2, 4), schedules.StageCosts.uniform(2, 1.0, 2.0))
    schedules.validate_timeline(timeline)
    overlapping = dataclasses.replace(timeline, start=timeline.start.copy(), end=timeline.end.copy())
    row = _row(timeline.schedule, FORWARD, 0, 1)
    overlapping.start[row] -= 0.5
    overlapping.end[row] -= 0.5
    with pytest.raises(schedules.ScheduleError, match="while F0 is still running on IPU 0.*one action at a time"):
        schedules.validate_timeline(overlapping)
    early = dataclasses.replace(timeline, start=timeline.start.copy())
    early.start[_row(timeline.schedule, FORWARD, 1, 0)] = 0.5
    with pytest.raises(
        schedules.ScheduleError, match=r"F0 \(forward of micro-batch 0 on stage 1.*before F0 on stage 0"
    ):
        schedules.validate_timeline(early)
