"""Graphcore's divisibility rules raise errors that say what to change."""

import pytest

from ipu_teach import schedules


@pytest.mark.parametrize(
    "name,stages,training,multiple",
    [
        ("Grouped", 4, True, 8),
        ("Grouped", 4, False, 4),
        ("Interleaved", 3, True, 3),
        ("Interleaved", 3, False, 3),
        ("Sequential", 5, True, 1),
        ("GPipe", 5, True, 1),
        ("1F1B", 5, True, 1),
    ],
)
def test_accumulation_multiple_per_schedule(name, stages, training, multiple):
    assert schedules.accumulation_multiple(name, stages, training) == multiple
    schedules.check_gradient_accumulation(name, stages, 3 * multiple, training)  # a multiple passes


def test_grouped_error_names_the_numbers_and_the_alternatives():
    with pytest.raises(schedules.PipelineScheduleError) as error:
        schedules.grouped(stages=4, micro_batches=12)
    message = str(error.value)
    for part in (
        "Grouped",
        "4 stages",
        "multiple of 8 (2 x 4 stages)",
        "it is 12",
        "Use 8 or 16",
        "PipelineSchedule.Interleaved (a multiple of 4)",
        "PipelineSchedule.Sequential",
    ):
        assert part in message


def test_inference_and_interleaved_errors_give_the_nearest_valid_counts():
    with pytest.raises(schedules.PipelineScheduleError, match=r"multiple of 3 \(3 stages\), but it is 7\. Use 6 or 9"):
        schedules.interleaved(3, 7)
    with pytest.raises(
        schedules.PipelineScheduleError, match=r"steps_per_execution\) to be a multiple of 4 .*Use 4 or 8"
    ):
        schedules.grouped(4, 6, training=False)
    with pytest.raises(schedules.PipelineScheduleError, match=r"it is 2\. Use 4 or"):  # no zero suggestion
        schedules.grouped(2, 2)


@pytest.mark.parametrize(
    "stages,micro_batches,bad",
    [(0, 4, "stages"), (2, 0, "micro-batches"), (2.5, 4, "stages"), (2, True, "micro-batches")],
)
def test_stages_and_micro_batches_must_be_whole_and_positive(stages, micro_batches, bad):
    with pytest.raises(schedules.PipelineScheduleError, match=bad):
        schedules.sequential(stages, micro_batches)
