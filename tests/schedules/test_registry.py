"""The schedule registry is the one list every other place reads."""

import pytest

from ipu_teach import schedules
from ipu_teach.ipu.ops.pipelining_ops import PipelineSchedule
from ipu_teach.schedules.registry import REGISTRY
from ipu_teach.widgets.pipeline import GRAPHCORE_SCHEDULES, SCHEDULES


def test_every_place_lists_the_registered_schedules_in_order():
    keys = [spec.key for spec in REGISTRY]
    assert list(schedules.SCHEDULE_NAMES) == keys == list(schedules.GENERATORS)
    assert list(SCHEDULES) == [spec.display for spec in REGISTRY]
    graphcore = [spec.display for spec in REGISTRY if spec.graphcore]
    assert list(GRAPHCORE_SCHEDULES) == [member.name for member in PipelineSchedule] == graphcore
    assert [member.value for member in PipelineSchedule] == [0, 1, 2]  # Graphcore's values


@pytest.mark.parametrize("spec", REGISTRY, ids=lambda spec: spec.key)
def test_each_entry_names_generates_and_rules_its_schedule(spec):
    for name in (spec.key, spec.display, *spec.aliases):
        assert schedules.schedule_key(name) == spec.key
    generator = schedules.GENERATORS[spec.key]
    assert generator.__name__ == spec.key and generator.__doc__.strip()  # the explorer shows its first paragraph
    multiple = schedules.accumulation_multiple(spec.key, 3)
    plan = schedules.make_schedule(spec.display, 3, 2 * multiple)
    assert plan.name == spec.display and plan.lockstep == spec.lockstep
    schedules.validate(plan)


def test_the_rule_message_offers_the_later_graphcore_schedules():
    with pytest.raises(schedules.PipelineScheduleError) as grouped:
        schedules.check_gradient_accumulation(PipelineSchedule.Grouped, 3, 5)
    assert str(grouped.value).endswith(
        "Use 6 or use PipelineSchedule.Interleaved (a multiple of 3) or PipelineSchedule.Sequential (any count)."
    )
    with pytest.raises(schedules.PipelineScheduleError) as interleaved:
        schedules.check_gradient_accumulation("interleaved", 3, 5, training=False)
    assert str(interleaved.value).endswith("Use 3 or 6 or use PipelineSchedule.Sequential (any count).")
