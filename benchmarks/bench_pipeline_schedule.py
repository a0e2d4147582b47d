"""Benchmark: generate, validate and time a 16-stage pipeline with 1,024 micro-batches, per schedule.

Target (issue 5): under 1 s each. Prints the wall-clock seconds (best of a few runs) and the ratio
to the target; a ratio below 1 meets it. Run:
    PYTHONPATH=. python benchmarks/bench_pipeline_schedule.py
"""

from __future__ import annotations

import time

from ipu_teach.schedules import GENERATORS, StageCosts, summarise, time_schedule, validate, validate_timeline

STAGES, MICRO_BATCHES, TARGET_SECONDS, REPEATS = 16, 1024, 1.0, 3


def generate_validate_time(name: str):
    costs = StageCosts.uniform(STAGES, forward=1e-3, backward=2e-3, weight_update=5e-4, transfer_bytes=1e6)
    schedule = validate(GENERATORS[name](STAGES, MICRO_BATCHES))
    timeline = time_schedule(schedule, costs)
    validate_timeline(timeline)
    return schedule, timeline


def main() -> None:
    print(f"{STAGES} stages x {MICRO_BATCHES} micro-batches, training: generate + validate + time (wall clock)")
    worst = 0.0
    for name in GENERATORS:
        seconds = []
        for _ in range(REPEATS):
            began = time.perf_counter()
            schedule, timeline = generate_validate_time(name)
            seconds.append(time.perf_counter() - began)
        best = min(seconds)
        worst = max(worst, best / TARGET_SECONDS)
        metrics = summarise(timeline)
        print(
            f"{schedule.name:>12}: {len(schedule):6d} actions, {best:.3f} s, ratio to the {TARGET_SECONDS:g} s "
            f"target {best / TARGET_SECONDS:.3f}  (simulated total {metrics.total_seconds:.3f} s, "
            f"utilisation {metrics.utilisation:.1%}, peak stash {max(metrics.peak_stash)})"
        )
    print(f"worst ratio to target: {worst:.3f} ({'meets' if worst < 1 else 'MISSES'} the target)")


if __name__ == "__main__":
    main()
