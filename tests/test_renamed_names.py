"""Names renamed by issue 26 still work for one release under their old names, as the same objects
(CONTRIBUTING, "One name per concept"): notebooks and users' code written before keep running."""

import importlib

from ipu_teach import bsp, schedules


def test_the_old_names_are_the_new_objects():
    assert bsp.Engine is bsp.CostEngine and bsp.ComputeSet is bsp.CostedComputeSet
    assert schedules.Timeline is schedules.ScheduleTiming


def test_the_old_schedule_package_re_exports_the_new_one():
    pipeline = importlib.import_module("ipu_teach.pipeline")
    assert set(pipeline.__all__) == set(schedules.__all__)
    assert all(getattr(pipeline, name) is getattr(schedules, name) for name in schedules.__all__)


def test_poplars_own_names_are_not_the_cost_engines():
    from ipu_teach.bsp import poplar

    assert poplar.Engine is not bsp.CostEngine and poplar.ComputeSet is not bsp.CostedComputeSet
