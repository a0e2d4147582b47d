"""Every schedule is complete and dependency-ordered for stages 1..8 and many accumulation counts,
and has the shape Graphcore's descriptions predict (slots, stash, device mapping)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach import schedules
from ipu_teach.schedules.actions import BACKWARD, FORWARD, WEIGHT_UPDATE

NAMES = schedules.SCHEDULE_NAMES  # every registered schedule, a new one included


@st.composite
def pipelines(draw):
    """A schedule name, stages 1..8, a micro-batch count obeying the schedule's rule, training or not."""
    name = draw(st.sampled_from(NAMES))
    stages = draw(st.integers(1, 8))
    training = draw(st.booleans())
    multiple = schedules.accumulation_multiple(name, stages, training)
    micro_batches = multiple * draw(st.integers(1, max(1, 48 // multiple)))
    return name, stages, micro_batches, training


@settings(max_examples=150, deadline=None, derandomize=True)
@given(pipelines(), st.lists(st.floats(0.0, 5.0), min_size=3, max_size=3), st.booleans())
def test_every_schedule_validates_and_times_consistently(case, cost_seeds, recompute):
    name, stages, micro_batches, training = case
    schedule = schedules.validate(schedules.make_schedule(name, stages, micro_batches, training=training))
    forward, backward, transfer = cost_seeds
    rng = np.random.default_rng(stages * 1000 + micro_batches)
    costs = schedules.StageCosts(
        forward=forward + rng.random(stages),
        backward=backward + rng.random(stages),
        weight_update=rng.random(stages),
        transfer_bytes=transfer * 1e6 * rng.random(stages - 1),
    )
    timeline = schedules.time_schedule(schedule, costs, recompute=recompute)
    schedules.validate_timeline(timeline)
    expected_actions = stages * micro_batches * (2 if training else 1) + (stages if training else 0)
    assert len(schedule) == expected_actions
    busy = np.zeros(schedule.ipus)
    for timed in timeline.timed_actions():
        busy[timed.action.ipu] += timed.end - timed.start
    assert schedules.utilisation(timeline) == pytest.approx(busy.sum() / (schedule.ipus * timeline.total))
    assert schedules.bubble_fraction(timeline) == pytest.approx(1 - busy.sum() / (schedule.ipus * timeline.total))
    spans = schedules.phases(timeline)
    assert spans.ramp_up + spans.main + spans.ramp_down == pytest.approx(timeline.total)
    assert min(spans.ramp_up, spans.main, spans.ramp_down) >= 0


def _slots(schedule, kind):
    slots = np.full((schedule.stages, schedule.micro_batches), -1)
    chosen = schedule.kind == kind
    slots[schedule.stage[chosen], schedule.micro_batch[chosen]] = schedule.slot[chosen]
    return slots


@pytest.mark.parametrize("stages,micro_batches", [(1, 2), (3, 6), (4, 16)])
def test_grouped_runs_a_forward_then_a_backward_per_step(stages, micro_batches):
    schedule = schedules.grouped(stages, micro_batches)
    s, m = np.arange(stages)[:, None], np.arange(micro_batches)[None, :]
    assert np.array_equal(_slots(schedule, FORWARD), np.broadcast_to(m + s, (stages, micro_batches)))
    assert np.array_equal(_slots(schedule, BACKWARD), np.broadcast_to(m + 2 * stages - 1 - s, (stages, micro_batches)))
    updates = schedule.slot[schedule.kind == WEIGHT_UPDATE]
    assert np.all(updates == micro_batches + 2 * stages - 1)  # one lock-step step after the last backward
    for row in range(len(schedule) - 1):  # within a step an IPU's forward comes before its backward
        if schedule.slot[row] == schedule.slot[row + 1] and schedule.stage[row] == schedule.stage[row + 1]:
            assert schedule.kind[row] == FORWARD and schedule.kind[row + 1] == BACKWARD


@pytest.mark.parametrize("stages,micro_batches", [(2, 4), (4, 16), (5, 10)])
def test_stash_per_stage_follows_each_schedules_shape(stages, micro_batches):
    s = np.arange(stages)
    assert list(schedules.peak_stash(schedules.grouped(stages, 2 * micro_batches))) == list(2 * (stages - s))
    assert list(schedules.peak_stash(schedules.interleaved(stages, micro_batches))) == list(stages - s)
    assert list(schedules.peak_stash(schedules.one_f_one_b(stages, micro_batches))) == list(stages - s)
    assert list(schedules.peak_stash(schedules.gpipe(stages, micro_batches))) == [micro_batches] * stages
    assert list(schedules.peak_stash(schedules.sequential(stages, micro_batches))) == [1] * stages
    assert list(schedules.peak_stash(schedules.grouped(stages, micro_batches, training=False))) == [0] * stages


def test_interleaved_and_one_f_one_b_share_the_per_ipu_order_but_not_the_timing_mode():
    interleaved, one_f_one_b = schedules.interleaved(4, 8), schedules.one_f_one_b(4, 8)
    passes = interleaved.kind != WEIGHT_UPDATE
    assert np.array_equal(interleaved.slot[passes], one_f_one_b.slot[one_f_one_b.kind != WEIGHT_UPDATE])
    assert interleaved.lockstep and not one_f_one_b.lockstep
    ipu0 = [str(action) for action in one_f_one_b.actions() if action.ipu == 0]
    assert ipu0[:6] == ["F0", "F1", "F2", "F3", "B0", "F4"]  # warm-up of stages - 0 forwards, then 1F1B


def test_sequential_runs_one_action_per_slot():
    schedule = schedules.sequential(3, 5)
    assert len(np.unique(schedule.slot)) == len(schedule) == schedule.slots


def test_inference_schedules_only_run_forwards():
    for name in NAMES:
        schedule = schedules.make_schedule(name, 4, 8, training=False)
        assert set(schedule.kind.tolist()) == {FORWARD}
        assert not schedule.training


def test_device_mapping_places_stages_and_is_checked():
    schedule = schedules.grouped(4, 8, device_mapping=[0, 0, 1, 1])
    assert schedule.ipus == 2
    assert set(zip(schedule.stage.tolist(), schedule.ipu.tolist())) == {(0, 0), (1, 0), (2, 1), (3, 1)}
    with pytest.raises(ValueError, match="one IPU index >= 0 for each of the 4 pipeline stages"):
        schedules.grouped(4, 8, device_mapping=[0, 1])


def test_make_schedule_accepts_graphcore_and_paper_names():
    class PipelineSchedule:  # stands in for ipu.ops.pipelining_ops.PipelineSchedule.Grouped
        name = "Grouped"

    assert schedules.make_schedule(PipelineSchedule(), 2, 4).name == "Grouped"
    assert schedules.make_schedule("1F1B", 2, 4).name == "1F1B"
    assert schedules.make_schedule("PipelineSchedule.Interleaved", 2, 4).name == "Interleaved"
    with pytest.raises(schedules.PipelineScheduleError, match="Unknown pipeline schedule 'zigzag'"):
        schedules.make_schedule("zigzag", 2, 4)


def test_actions_round_trip_through_from_actions():
    schedule = schedules.interleaved(3, 6)
    rebuilt = schedules.Schedule.from_actions("copy", 3, 6, list(schedule.actions())[::-1], lockstep=True)
    assert list(rebuilt.actions()) == list(schedule.actions())
    assert str(schedule.action(0)) == "F0" and schedule.action(len(schedule) - 1).micro_batch is None


def test_text_grid_shows_each_ipus_actions_per_step():
    lines = schedules.text_grid(schedules.grouped(2, 4)).splitlines()
    assert lines[1].split("|")[1].split() == ["F0", "F1", "F2", "F3/B0", "B1", "B2", "B3", "WU"]
    assert lines[2].split("|")[1].split() == [".", "F0", "F1/B0", "F2/B1", "F3/B2", "B3", ".", "WU"]
    assert schedules.text_grid(schedules.grouped(2, 4), max_slots=3).splitlines()[1].endswith("F2 ...")
    shared = schedules.text_grid(schedules.sequential(2, 1, device_mapping=[0, 0])).splitlines()[1]
    assert shared.split("|")[1].split() == ["s0:F0", "s1:F0", "s1:B0", "s0:B0", "s0:WU", "s1:WU"]
