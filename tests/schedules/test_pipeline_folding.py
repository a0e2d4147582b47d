"""A long pipeline's metrics folded from ramp-up, one period and ramp-down equal the full simulation's."""

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach import schedules
from ipu_teach.schedules.registry import REGISTRY
from ipu_teach.widgets.pipeline import draw_pipeline, time_pipeline

# Costs in quarters and link times in whole seconds add up exactly in floats, so "equal" means equal.
quarters = st.integers(0, 12).map(lambda n: n / 4)


@st.composite
def configurations(draw):
    spec = draw(st.sampled_from(REGISTRY))
    stages = draw(st.integers(1, 5))
    costs = schedules.StageCosts(
        forward=draw(st.lists(quarters, min_size=stages, max_size=stages)),
        backward=draw(st.lists(quarters, min_size=stages, max_size=stages)),
        weight_update=draw(st.lists(quarters, min_size=stages, max_size=stages)),
        transfer_bytes=draw(st.lists(st.integers(0, 3), min_size=stages - 1, max_size=stages - 1)),
        link_bytes_per_s=1.0,
        link_latency_s=float(draw(st.integers(0, 1))),
    )
    mapping = draw(st.none() | st.lists(st.integers(0, stages - 1), min_size=stages, max_size=stages))
    micro_batches = schedules.accumulation_multiple(spec.key, stages) * draw(st.integers(1, 40))
    return spec.key, micro_batches, costs, mapping, draw(st.booleans())


def full_metrics(schedule, micro_batches, costs, mapping=None, recompute=False):
    plan = schedules.make_schedule(schedule, costs.stages, micro_batches, device_mapping=mapping)
    timeline = schedules.time_schedule(plan, costs, recompute=recompute)
    return schedules.summarise(timeline, activation_bytes=[3.0] * costs.stages, input_bytes=[1.0] * costs.stages)


def folded_metrics(schedule, micro_batches, costs, mapping=None, recompute=False):
    stash = {"activation_bytes": [3.0] * costs.stages, "input_bytes": [1.0] * costs.stages}
    return schedules.summarise_folded(
        schedule, micro_batches, costs, recompute=recompute, device_mapping=mapping, **stash
    )


@settings(max_examples=300, deadline=None, derandomize=True)
@given(configurations())
def test_folded_metrics_equal_the_full_simulation_for_every_schedule(configuration):
    schedule, micro_batches, costs, mapping, recompute = configuration
    assert folded_metrics(*configuration) == full_metrics(schedule, micro_batches, costs, mapping, recompute)


@pytest.mark.parametrize("spec", [spec for spec in REGISTRY if spec.key != "gpipe"], ids=lambda spec: spec.key)
def test_a_fold_of_a_thousand_periods_equals_the_full_simulation(spec):
    costs = schedules.StageCosts(
        forward=[1.0, 1.5, 0.75, 1.25],
        backward=[2.0, 2.5, 1.5, 3.0],
        weight_update=[1.0] * 4,
        transfer_bytes=[2, 1, 3],
        link_bytes_per_s=1.0,
        link_latency_s=1.0,
    )
    micro_batches = schedules.accumulation_multiple(spec.key, 4) * 1_100  # beyond EVERY_ACTION_AT_MOST for most
    assert folded_metrics(spec.key, micro_batches, costs) == full_metrics(spec.key, micro_batches, costs)


@pytest.mark.parametrize("schedule", ["Grouped", "Interleaved", "Sequential", "1F1B", "Eager 1F1B"])
def test_time_pipeline_of_ten_million_micro_batches_takes_memory_that_does_not_grow_with_them(schedule):
    tracemalloc.start()
    try:
        view = time_pipeline(schedule, stages=4, accumulation=10**7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # every action timed would be hundreds of bytes each (2 GB for 10**6 micro-batches before)
    assert peak < 10 * 2**20, f"{peak:,} bytes"
    assert view.timeline is None and view.metrics.micro_batches == 10**7 and not view.error
    short = time_pipeline(schedule, stages=4, accumulation=64).metrics
    # every further micro-batch adds the same seconds: one more forward and backward of the slowest period
    per_batch = (short.total_seconds - time_pipeline(schedule, stages=4, accumulation=32).metrics.total_seconds) / 32
    assert view.metrics.total_seconds == short.total_seconds + (10**7 - 64) * per_batch
    assert view.metrics.peak_stash == short.peak_stash and view.metrics.phases.ramp_up == short.phases.ramp_up


def test_grouped_of_ten_million_micro_batches_matches_its_closed_form():
    stages, forward, backward, update = 4, 1.0, 2.0, 1.0
    metrics = time_pipeline("Grouped", stages, accumulation=10**7, ratio=backward).metrics
    # as in test_pipeline_timing: S forwards, M - 1 steps of a forward and a backward, S backwards, the update
    assert metrics.total_seconds == stages * forward + (10**7 - 1) * (forward + backward) + stages * backward + update


def test_a_schedule_whose_main_phase_does_not_repeat_is_refused_beyond_the_actions_it_times():
    with pytest.raises(ValueError, match=r"GPipe with 1,000,000 micro-batches: its main phase does not repeat .* "):
        time_pipeline("GPipe", stages=4, accumulation=10**6)
    assert time_pipeline("GPipe", stages=4, accumulation=schedules.EVERY_ACTION_AT_MOST).metrics.peak_stash[0] == 4_096


def test_a_pipeline_too_long_to_draw_says_so_and_keeps_its_figures():
    import matplotlib.pyplot as plt

    figure, view = draw_pipeline("Interleaved", stages=2, accumulation=10**6)
    texts = [text.get_text() for ax in figure.axes for text in ax.texts]
    assert texts == [
        "Interleaved: 2 stages, 1,000,000 micro-batches, too many to draw (at most 4,096); timed from the ramp-up, "
        "one period of the main phase and the ramp-down"
    ]
    assert view.metrics.micro_batches == 10**6 and view.stash_per_ipu == (2.0, 1.0)
    plt.close(figure)
