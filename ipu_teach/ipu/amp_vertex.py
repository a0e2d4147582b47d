"""Cycles of one tile's AMP convolution vertex, as poplibs estimates them.

Poplar runs a tile's share of a matrix product or convolution on the AMP with one of two supervisor vertices
(poplibs lib/poplin/PerformanceEstimation.hpp, the estimates its convolution planner ranks plans by):

- ``ConvPartial1x1Out`` when the kernel is one position (a matrix product, a 1x1 convolution):
  getConvPartial1x1SupervisorInnerLoopCycleEstimateHalfFloat and ...OuterLoopCycleEstimateHalfFloat;
- ``ConvPartialnx1`` otherwise: getConvPartialnx1WorkerCycles, ...SupervisorInnerLoopCycleEstimateHalfFloat
  and ...SupervisorOuterLoopCycleEstimateHalfFloat, after a vertex zeroing the partials
  (estimateZeroSupervisorCycles).

Both loop over groups of input channels and of output channels (one group per conv unit's output); in each
pass the supervisor loads the conv units' weights and the six workers each run through their share of the
output positions, one position every 8 worker cycles with fp32 inputs and every 4 with fp16. A worker cycle
is 6 tile cycles (the workers are barrel-scheduled), so the results here are tile cycles, as poplibs'.

Simplification: a worker's share of the output is one run of positions (poplibs' worklists may hold several
partial rows for ConvPartialnx1, each with its own ~30 worker cycles of setup), and an nx1 kernel of K positions
is taken as sqrt(K) x sqrt(K) when K is a square (1 x K otherwise).
"""

from __future__ import annotations

import math

from ..integers import ceil_div

WEIGHT_BYTES_PER_CONV_UNIT = 32
"""Bytes of weights one conv unit holds: 8 fp32 or 16 fp16 (``weightsPerConvUnit`` x the type's size)."""
COEFFICIENT_LOAD_BYTES_PER_CYCLE = 16
"""The conv units' weights load over 128-bit loads (``convUnitCoeffLoadBytesPerCycle``, use128BitConvUnitLoad)."""
DATA_PATH_BITS = 64
"""The tile's data path, for zeroing the partials (``dataPathWidth``)."""


def _weight_load_cycles(conv_units: int) -> int:
    """getConvPartialAmpSupervisorWeightLoadCycleEstimate for a filter height of 1."""
    return conv_units * WEIGHT_BYTES_PER_CONV_UNIT // COEFFICIENT_LOAD_BYTES_PER_CYCLE


def _shares(positions: int, workers: int) -> tuple:
    """The most and the fewest output positions one of the tile's workers gets."""
    return ceil_div(positions, workers), positions // workers


def _worker_1x1(positions: int, fp32: bool, common_path: bool, zeroing: bool, zero_per_group: int) -> int:
    """Worker cycles of ConvPartial1x1Out for one pass over ``positions`` outputs."""
    if fp32:
        zero = (2 + zero_per_group * max(positions, 1)) * zeroing
        fixed = {0: 24, 1: 47 + zero, 2: 46 + zero}
        return fixed.get(positions, 46 + zero + (positions - 3) * 8)
    if common_path:  # fp16 inputs with float partials or 16 conv units
        tail = 1 if zeroing else 2
        fixed = {0: 20 + tail, 1: 31 + tail, 2: 40 + tail}
        return fixed.get(positions, (37 if zeroing else 38) + (positions - 3) * 4) - 7
    zero = (2 + zero_per_group * max(positions, 1)) * zeroing
    fixed = {0: 24, 1: 39 + zero, 2: 40 + zero}
    return fixed.get(positions, 41 + zero + (positions - 3) * 4)


def one_by_one_cycles(
    positions, in_groups, out_groups, fp32: bool, float_partials: bool, conv_units: int, workers: int
) -> int:
    """Tile cycles of a ConvPartial1x1Out vertex over ``positions`` outputs (rows of a matrix product), on a tile
    of ``workers`` worker contexts (``numWorkerContexts``: ``hardware.IPUSpec.threads_per_tile``)."""
    common_path = (not fp32 and conv_units == 16) or float_partials
    zero_per_group = 8 if fp32 and conv_units == 16 else 4 if float_partials else 2
    most, fewest = _shares(positions, workers)

    def inner(zeroing):
        slowest = workers * _worker_1x1(most, fp32, common_path, zeroing, zero_per_group)
        quickest = workers * _worker_1x1(fewest, fp32, common_path, zeroing, zero_per_group) if fewest else 0
        return max(slowest, quickest + 14)

    retention_total, retention_per_group = (7, 3) if not fp32 and common_path else (0, 0)
    loads, c = _weight_load_cycles(conv_units), int(common_path)
    return (
        50
        + workers * (retention_total + retention_per_group * (in_groups - 1))
        + 12
        + c
        + (in_groups - 1) * (15 - c + 1 + out_groups * (19 + 6 + loads + inner(False)))
        + 10
        + 1
        + out_groups * (19 - c + 7 + loads + inner(True))
    )


def _worker_nx1(positions: int, fp32: bool, float_partials: bool, conv_units: int) -> int:
    """Worker cycles of ConvPartialnx1 for one kernel position over one run of ``positions`` outputs."""
    stride = int(not fp32 and conv_units == (16 if not float_partials else 8))
    if positions >= 3:
        work = (45 + (positions - 3) * 8) if fp32 else (34 + (positions - 3) * 4)
    else:
        work = {0: 17, 1: 33 if fp32 else 29, 2: 44 if fp32 else 33 + stride}[positions]
    return 17 + int(not float_partials) + 3 + work - 9


def n_by_one_cycles(
    positions, kernel_positions, in_groups, out_groups, fp32: bool, float_partials: bool, conv_units: int, workers: int
) -> int:
    """Tile cycles of zeroing the partials and a ConvPartialnx1 vertex over ``positions`` outputs and a kernel
    of ``kernel_positions``."""
    most, fewest = _shares(positions, workers)
    slowest = workers * _worker_nx1(most, fp32, float_partials, conv_units)
    quickest = workers * _worker_nx1(fewest, fp32, float_partials, conv_units) if fewest else 0
    side = math.isqrt(kernel_positions)
    height, width = (side, side) if side * side == kernel_positions else (1, kernel_positions)
    innermost = _weight_load_cycles(conv_units) + 15 + 3
    inner = height * (14 + width * (12 + innermost)) + max(slowest, quickest + 9) * kernel_positions
    outer = (
        109
        + workers * 9
        + workers * (9 if float_partials else 10)
        + out_groups * 17
        + (out_groups - 1) * 6
        + 1
        + 1
        + 16
        + in_groups * (14 + out_groups * (14 + inner))
    )
    floats_per_vector = DATA_PATH_BITS // 32
    zeroing = workers * (ceil_div(ceil_div(positions * conv_units, workers), floats_per_vector) + 14 - 9) * out_groups
    return outer + zeroing
