# Exercise 1 (solution): with the backward as cheap as the forward, the five overlapping schedules tie.
from ipu_teach.widgets.pipeline import time_pipeline

for schedule_name in ("GPipe", "1F1B", "Eager 1F1B", "Grouped", "Interleaved", "Sequential"):
    equal_passes = time_pipeline(schedule_name, stages=4, accumulation=16, ratio=1.0).metrics
    print(f"{schedule_name:<12}{equal_passes.total_seconds:>6.0f} units, utilisation {equal_passes.utilisation:.0%}, "
          f"stash {list(equal_passes.peak_stash)}")
# Interleaved runs a forward and a backward in each lock-step slot, and each slot lasts as long as the slower
# one: when both cost the same nobody waits, so it is as fast as 1F1B with 1F1B's small stash. Sequential
# still runs one stage at a time. Only the stash tells GPipe, Grouped, 1F1B and Eager 1F1B apart.
