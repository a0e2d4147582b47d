"""Host time to simulate one BSP superstep on 1, 16 and 64 IPUs of 1,472 tiles.

Target: well under 1 ms of host time per superstep on 64 IPUs. Each measured program is a
Sequence of distinct supersteps (every one costed afresh from int32 arrays of shape (ipus, tiles):
compute cycles, exchange bytes received and sent). The time covers wrapping the arrays in
ComputeSet/Exchange (their checks), building the program, and Engine(...).run().
Prints microseconds per superstep and the ratio to the 1 ms target.
Run: PYTHONPATH=. python benchmarks/bench_bsp_superstep.py
"""

import time

import numpy as np

from ipu_teach import bsp
from ipu_teach.hardware import MK2

SUPERSTEPS = 50
TARGET_SECONDS = 1e-3
REPEATS = 5


def raw_arrays(ipus, rng):
    """(cycles, bytes received, bytes sent) per tile for each superstep, as a compiler would produce."""
    shape = (SUPERSTEPS, 3, ipus, MK2.tiles)
    return rng.integers(0, 4_096, shape, dtype=np.int32)


def program_for(arrays):
    return bsp.Sequence(
        [
            bsp.ComputeSuperstep(bsp.CostedComputeSet(f"cs{i}", cycles), exchange=bsp.Exchange(received, sent))
            for i, (cycles, received, sent) in enumerate(arrays)
        ]
    )


def seconds_per_superstep(ipus):
    arrays = raw_arrays(ipus, np.random.default_rng(ipus))
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        timeline = bsp.CostEngine(program_for(arrays), MK2, ipus=ipus).run()
        best = min(best, time.perf_counter() - start)
    assert timeline.rows == SUPERSTEPS
    return best / SUPERSTEPS


def seconds_for_long_repeat(ipus, count=100_000):
    step = program_for(raw_arrays(ipus, np.random.default_rng(0))[:1]).programs[0]
    start = time.perf_counter()
    timeline = bsp.CostEngine(bsp.Repeat(count, step), MK2, ipus=ipus).run()
    elapsed = time.perf_counter() - start
    assert timeline.counts[0] == count
    return elapsed


def main():
    print(
        f"host time to simulate one superstep of {MK2.tiles} tiles per IPU (best of {REPEATS}, "
        f"{SUPERSTEPS} distinct supersteps per run):"
    )
    for ipus in (1, 16, 64):
        seconds = seconds_per_superstep(ipus)
        print(
            f"  {ipus:>3} IPU(s) = {ipus * MK2.tiles:>6,} tiles: {seconds * 1e6:8.1f} us per superstep, "
            f"{seconds / TARGET_SECONDS:.3f} x the 1 ms target"
        )
    print(
        f"Repeat(100000, one superstep) on 64 IPUs: {seconds_for_long_repeat(64) * 1e6:.1f} us in total "
        "(loops are costed once)"
    )


if __name__ == "__main__":
    main()
