"""Timing from the cost model against closed forms, and the metrics the descriptions predict."""

import numpy as np
import pytest

from ipu_teach import schedules
from ipu_teach.schedules.registry import REGISTRY


@pytest.mark.parametrize(
    "stages,micro_batches,forward,backward", [(1, 4, 1.0, 2.0), (4, 16, 1.0, 2.0), (3, 12, 0.5, 0.5), (8, 32, 2.0, 3.0)]
)
def test_grouped_total_matches_the_closed_form_of_its_steps(stages, micro_batches, forward, backward):
    update = 0.25
    costs = schedules.StageCosts.uniform(stages, forward, backward, weight_update=update)
    timeline = schedules.time_schedule(schedules.grouped(stages, micro_batches), costs)
    # Steps 0..S-1 run only forwards, the next M-1 steps a forward and a backward on some IPU,
    # the last S steps only backwards, then one weight-update step.
    expected = stages * forward + (micro_batches - 1) * (forward + backward) + stages * backward + update
    assert timeline.total == pytest.approx(expected)
    spans = schedules.phases(timeline)
    assert spans.ramp_up == pytest.approx(stages * forward + (stages - 1) * (forward + backward))
    assert spans.main == pytest.approx((micro_batches - 2 * stages + 1) * (forward + backward))


def test_lockstep_adds_the_longest_transfer_to_each_step():
    costs = schedules.StageCosts.uniform(2, 1.0, 1.0, transfer_bytes=320e6, link_bytes_per_s=320e9, link_latency_s=1e-3)
    timeline = schedules.time_schedule(schedules.grouped(2, 4), costs)
    # IPU0: F0 F1 F2    F3/B0 B1    B2 B3 WU
    # IPU1: .  F0 F1/B0 F2/B1 F3/B2 B3 .  WU   -> only the last two steps send nothing
    compute = 1 + 1 + 2 + 2 + 2 + 1 + 1 + 0
    assert timeline.total == pytest.approx(compute + 6 * (320e6 / 320e9 + 1e-3))


def test_each_lockstep_slot_pays_its_sync_and_each_transfer_its_own():
    link = {"transfer_bytes": 320e6, "link_bytes_per_s": 320e9, "link_latency_s": 1e-3}
    free = schedules.time_schedule(schedules.grouped(2, 4), schedules.StageCosts.uniform(2, 1.0, 1.0, **link))
    synced = schedules.time_schedule(
        schedules.grouped(2, 4), schedules.StageCosts.uniform(2, 1.0, 1.0, slot_sync_s=0.125, **link)
    )
    # 8 slots (see the test above), 6 of which send a transfer
    assert synced.total == pytest.approx(free.total + (8 + 6) * 0.125)
    with pytest.raises(ValueError, match="slot_sync_s >= 0"):
        schedules.StageCosts.uniform(2, slot_sync_s=-1.0)


@pytest.mark.parametrize("stages,micro_batches", [(1, 3), (3, 5), (4, 16)])
def test_sequential_total_is_the_sum_of_all_costs(stages, micro_batches):
    rng = np.random.default_rng(7)
    costs = schedules.StageCosts(
        forward=rng.random(stages),
        backward=rng.random(stages),
        weight_update=rng.random(stages),
        transfer_bytes=rng.random(stages - 1) * 1e9,
    )
    timeline = schedules.time_schedule(schedules.sequential(stages, micro_batches), costs)
    transfers = 2 * micro_batches * costs.transfer_seconds.sum()
    expected = micro_batches * (sum(costs.forward) + sum(costs.backward)) + sum(costs.weight_update) + transfers
    assert timeline.total == pytest.approx(expected)
    assert schedules.utilisation(timeline) < 1 / stages + 1e-9


def test_one_f_one_b_event_driven_total_matches_its_closed_form():
    stages, micro_batches, forward, backward = 4, 16, 1.0, 2.0
    timeline = schedules.time_schedule(
        schedules.one_f_one_b(stages, micro_batches), schedules.StageCosts.uniform(stages, forward, backward)
    )
    assert timeline.total == pytest.approx((micro_batches + stages - 1) * (forward + backward))


def test_the_three_graphcore_schedules_differ_as_described():
    stages, micro_batches = 4, 16
    costs = schedules.StageCosts.uniform(stages, forward=1.0, backward=2.0)
    metrics = {
        name: schedules.summarise(schedules.time_schedule(schedules.make_schedule(name, stages, micro_batches), costs))
        for name in ("grouped", "interleaved", "sequential")
    }
    grouped, interleaved, sequential = metrics["grouped"], metrics["interleaved"], metrics["sequential"]
    assert grouped.total_seconds < interleaved.total_seconds < sequential.total_seconds
    assert sequential.peak_stash[0] < interleaved.peak_stash[0] < grouped.peak_stash[0]
    assert interleaved.total_seconds == pytest.approx(stages + (2 * micro_batches + stages - 2) * 2.0)
    # With equal forward and backward costs Interleaved loses nothing to waiting for the slower pass.
    even = schedules.StageCosts.uniform(stages, forward=1.5, backward=1.5)
    assert schedules.time_schedule(schedules.interleaved(stages, micro_batches), even).total == pytest.approx(
        schedules.time_schedule(schedules.grouped(stages, micro_batches), even).total
    )


def test_recomputation_costs_a_forward_per_backward_and_saves_stash_memory():
    costs = schedules.StageCosts.uniform(2, 1.0, 2.0)
    schedule = schedules.sequential(2, 3)
    plain = schedules.time_schedule(schedule, costs)
    recomputed = schedules.time_schedule(schedule, costs, recompute=True)
    assert recomputed.total - plain.total == pytest.approx(2 * 3 * 1.0)
    grouped = schedules.grouped(2, 4)
    assert list(schedules.stash_bytes(grouped, [100.0, 50.0])) == [400.0, 100.0]
    assert list(schedules.stash_bytes(grouped, [100.0, 50.0], [10.0, 5.0], recompute=True)) == [40.0, 10.0]
    with pytest.raises(ValueError, match="needs input_bytes"):
        schedules.stash_bytes(grouped, [100.0, 50.0], recompute=True)
    with pytest.raises(ValueError, match="activation_bytes needs 2 non-negative numbers"):
        schedules.stash_bytes(grouped, [100.0])


def test_stages_on_one_ipu_send_nothing_and_take_turns():
    costs = schedules.StageCosts.uniform(2, 1.0, 1.0, transfer_bytes=1e12)
    shared = schedules.time_schedule(schedules.gpipe(2, 3, device_mapping=[0, 0]), costs)
    schedules.validate_timeline(shared)
    assert shared.total == pytest.approx(2 * 2 * 3)  # one IPU does all 12 passes, no transfers
    assert schedules.utilisation(shared) == pytest.approx(1.0)


def test_event_driven_override_never_slower_than_lockstep():
    costs = schedules.StageCosts(forward=[1, 3, 1], backward=[2, 1, 4])
    schedule = schedules.grouped(3, 12)
    assert (
        schedules.time_schedule(schedule, costs, lockstep=False).total < schedules.time_schedule(schedule, costs).total
    )


def test_metrics_summary_is_plain_numbers():
    timeline = schedules.time_schedule(schedules.interleaved(2, 4), schedules.StageCosts.uniform(2, 1.0, 2.0))
    summary = schedules.summarise(timeline, activation_bytes=[8, 4])
    busy = timeline.busy_per_ipu()
    assert summary.utilisation_per_ipu == pytest.approx(tuple(busy / timeline.total))
    assert summary.utilisation == pytest.approx(busy.sum() / (2 * timeline.total))
    assert summary.stash_bytes == (16.0, 4.0) and summary.peak_stash == (2, 1)


def test_cost_inputs_are_checked():
    with pytest.raises(ValueError, match="StageCosts.backward needs 3 finite non-negative numbers"):
        schedules.StageCosts(forward=[1, 1, 1], backward=[1, -1, 1])
    with pytest.raises(ValueError, match="transfer_bytes needs 1 finite"):
        schedules.StageCosts(forward=[1, 1], backward=[1, 1], transfer_bytes=[1, 2])
    with pytest.raises(ValueError, match="StageCosts has 2 stages but schedule 'Grouped' has 3"):
        schedules.time_schedule(schedules.grouped(3, 6), schedules.StageCosts.uniform(2))


@pytest.mark.parametrize("name", [spec.key for spec in REGISTRY if not spec.lockstep])
def test_event_driven_waits_for_activations_and_gradients_to_cross_the_link(name):
    costs = schedules.StageCosts.uniform(2, 1.0, 2.0, transfer_bytes=64e9, link_bytes_per_s=320e9, link_latency_s=0.05)
    timeline = schedules.time_schedule(schedules.make_schedule(name, 2, 1), costs)
    link = 64e9 / 320e9 + 0.05
    assert timeline.total == pytest.approx(1 + link + 1 + 2 + link + 2)  # F s0, send, F s1, B s1, send, B s0


def test_eager_one_f_one_b_by_hand_on_two_stages():
    """2 stages, 4 micro-batches, forward 1, backward 2. Stage 0 runs F0 F1 F2 B0 F3 B1 B2 B3 (a warm-up of
    2 * (2 - 0) - 1 = 3 forwards), stage 1 F0 B0 F1 B1 F2 B2 F3 B3, each action as soon as its input is there.
    Without transfers, as 1F1B, 15 in all:
    S0 F0-F2 0-3, S1 F0 1-2 B0 2-4 F1 4-5 B1 5-7 F2 7-8 B2 8-10, S0 B0 4-6 F3 6-7 B1 7-9 B2 10-12,
    S1 F3 10-11 B3 11-13, S0 B3 13-15. Busy 2 x 4 x 3 = 24 of 2 x 15: utilisation 0.8.
    With a 1 s link (each send occupies the link 1 s): S0 F0-F2 0-3 (sent by 2, 3, 4), S1 F0 2-3 B0 3-5 (sent by 6)
    F1 5-6 B1 6-8 (by 9) F2 8-9 B2 9-11 (by 12), S0 B0 6-8 F3 8-9 (by 10) B1 9-11 B2 12-14, S1 F3 11-12 B3 12-14
    (by 15), S0 B3 15-17: 17, where 1F1B, whose stage 0 has sent only 2 forwards when it waits, takes 19."""
    schedule = schedules.validate(schedules.make_schedule("Eager 1F1B", 2, 4))
    costs = schedules.StageCosts.uniform(2, 1.0, 2.0)
    timeline = schedules.time_schedule(schedule, costs)
    assert timeline.total == pytest.approx(15.0)
    assert schedules.utilisation(timeline) == pytest.approx(0.8)
    assert schedules.bubble_fraction(timeline) == pytest.approx(0.2)
    assert schedules.summarise(timeline).peak_stash == (3, 1)
    order = [str(t.action) for t in sorted(timeline.timed_actions(), key=lambda t: t.start) if t.action.stage == 0]
    assert order == ["F0", "F1", "F2", "B0", "F3", "B1", "B2", "B3", "WU"]
    linked = schedules.StageCosts.uniform(2, 1.0, 2.0, transfer_bytes=320e9, link_bytes_per_s=320e9, link_latency_s=0.0)
    eager = schedules.time_schedule(schedule, linked)
    assert eager.total == pytest.approx(17.0)
    assert schedules.utilisation(eager) == pytest.approx(24 / 34)
    assert schedules.time_schedule(schedules.one_f_one_b(2, 4), linked).total == pytest.approx(19.0)


@pytest.mark.parametrize("stages, micro_batches", [(3, 6), (4, 16), (8, 32)])
def test_eager_one_f_one_b_stashes_two_stages_ahead_less_one(stages, micro_batches):
    """Stage s stashes 2 * (stages - s) - 1 micro-batches: between 1F1B's stages - s and Grouped's 2 * (stages - s)."""
    timeline = schedules.time_schedule(
        schedules.make_schedule("eager_1f1b", stages, micro_batches), schedules.StageCosts.uniform(stages, 1.0, 2.0)
    )
    assert schedules.summarise(timeline).peak_stash == tuple(2 * (stages - s) - 1 for s in range(stages))
