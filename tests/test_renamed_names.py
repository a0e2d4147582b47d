"""Names renamed by issue 26 still work for one release under their old names, as the same objects
(CONTRIBUTING, "One name per concept"): notebooks and users' code written before keep running."""

import importlib

import numpy as np

from ipu_teach import bsp, hardware, schedules


def test_the_old_names_are_the_new_objects():
    assert bsp.Engine is bsp.CostEngine and bsp.ComputeSet is bsp.CostedComputeSet
    assert schedules.Timeline is schedules.ScheduleTiming
    assert bsp.Execute is bsp.ComputeSuperstep and bsp.Copy is bsp.ExchangeSuperstep


def test_the_old_low_level_program_names_still_build_and_cost_a_program():
    """A program written with the old names costs what the same program with the new names does."""
    spec = hardware.MK2.with_tiles(4)
    old = bsp.Sequence(
        bsp.Execute(bsp.CostedComputeSet("work", np.full(4, 100))), bsp.Copy(bsp.Exchange(np.full(4, 64)))
    )
    new = bsp.Sequence(
        bsp.ComputeSuperstep(bsp.CostedComputeSet("work", np.full(4, 100))),
        bsp.ExchangeSuperstep(bsp.Exchange(np.full(4, 64))),
    )
    expected = {"compute": 100, "sync": 2 * 150, "exchange": 64 // 4}  # two syncs; 64 bytes a tile, 4 a cycle
    assert bsp.CostEngine(old, spec).run().totals() == bsp.CostEngine(new, spec).run().totals() == expected


def test_the_old_schedule_package_re_exports_the_new_one():
    pipeline = importlib.import_module("ipu_teach.pipeline")
    assert set(pipeline.__all__) == set(schedules.__all__)
    assert all(getattr(pipeline, name) is getattr(schedules, name) for name in schedules.__all__)


def test_poplars_own_names_are_not_the_cost_engines():
    from ipu_teach.bsp import poplar

    assert poplar.Engine is not bsp.CostEngine and poplar.ComputeSet is not bsp.CostedComputeSet
    assert poplar.Execute is not bsp.ComputeSuperstep and poplar.Copy is not bsp.ExchangeSuperstep
    # Poplar's Sequence, Repeat and Program are the low-level classes themselves: one class each, one name
    assert poplar.Sequence is bsp.Sequence and poplar.Repeat is bsp.Repeat and poplar.Program is bsp.Program
