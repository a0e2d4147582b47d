"""Cycles of poplin's ``ReduceAdd`` vertex, which adds a convolution's partial sums, as poplibs estimates them.

When a matrix product's depth is split over tiles, each stage of the reduction of its partial sums is a compute
set of ``poplin::ReduceAdd`` vertices, one a tile (poplibs lib/poplin/ConvReduce.cpp@7eac0f2, ``reduce``), not
popops' general reduction: a tile adds, for each of its outputs, the partials of the tiles it heard from. The
estimate is poplibs' ``getReduceCycleEstimate`` (lib/poplin/PerformanceEstimation.hpp), the one its convolution
planner ranks plans by (``estimateConvReduceCycles``):

- the "single input" vertex, when a tile's outputs are a whole number of accumulator vectors (4 float partials, 8
  half) and the exchanged partials fit in 1/16 of the tile's memory (``checkPartialsSizeForSingleInputReduce``): the
  row of partials the tile holds itself is read in place, the others arrive as one input; each worker loops over its
  vectors of outputs, 2 cycles per partial row of a vector (the 64-bit data path loads 2 float or 4 half partials a
  cycle) plus 7-10 cycles a loop;
- the general vertex otherwise: 3 cycles per partial row of a vector (one more to load the next row's pointer),
  outputs that are not whole vectors taking loops of their own.

Either way the reducing tile is one of those holding its outputs' partials, so it receives every row but its own
("except for one that may reside on-tile").

Workers run barrel-scheduled, so a worker cycle is 6 tile cycles: the results are tile cycles, as poplibs'.
Simplification: poplibs rounds the partials' bytes up to whole memory elements and compares them with 1/16 of the
memory between its first and last element offsets; those offsets are not published, so the bytes are compared as
they are with 1/16 of the tile's memory.
"""

from __future__ import annotations

from ..integers import ceil_div

PARTIAL_BYTES = {"float": 4, "half": 2}
"""Bytes of one partial sum by Poplar's partialsType (default "float" for fp32 and fp16 products)."""
DATA_PATH_BITS = 64
"""The tile's data path (``dataPathWidth``): how many partials one load brings."""
SUPERVISOR_CYCLES = 33
"""The single-input vertex's supervisor (``supervisorCycles``)."""
WORKER_SETUP_CYCLES = {True: 20, False: 32}
"""Each worker's fixed cycles, single-input or general vertex."""


def partial_bytes(float_partials: bool) -> int:
    """Bytes of one partial sum (:data:`PARTIAL_BYTES`), float or half."""
    return PARTIAL_BYTES["float" if float_partials else "half"]


def accumulator_width(float_partials: bool) -> int:
    """Outputs one accumulator vector holds (``accVectorWidth``): 4 float partials, 8 half."""
    return 4 if float_partials else 8


def single_input(outputs: int, partial_rows: int, float_partials: bool, sram_per_tile: int) -> bool:
    """Whether poplin reduces a tile's ``outputs`` from ``partial_rows`` rows of partials with the single-input vertex
    (one row the tile's own): its outputs are whole accumulator vectors and the exchanged rows fit in 1/16 of the
    tile's memory (lib/poplin/ConvReduce.cpp, ``useSingleInputReduce`` with ``enableFastReduce`` off, its default).

    >>> single_input(96, 8, True, 638976), single_input(90, 8, True, 638976)
    (True, False)
    """
    exchanged_bytes = outputs * (partial_rows - 1) * partial_bytes(float_partials)
    return outputs % accumulator_width(float_partials) == 0 and exchanged_bytes < sram_per_tile // 16


def cycles(
    outputs: int, partial_rows: int, float_partials: bool, float_output: bool, single: bool, workers: int = 6
) -> int:
    """Tile cycles of one tile's ReduceAdd vertex adding ``partial_rows`` rows of partials into ``outputs`` outputs
    (``single``: the single-input vertex, :func:`single_input`).

    Example: a tile reducing 96 outputs from 8 rows of float partials, single input or not

    >>> cycles(96, 8, True, True, True), cycles(96, 8, True, True, False)
    (681, 936)
    """
    width = accumulator_width(float_partials)
    per_load = DATA_PATH_BITS // (8 * partial_bytes(float_partials))
    if single:
        cycles_per_partial = width // min(width, per_load)
        loop_overhead = (8 if float_output else 7) if float_partials else (10 if float_output else 9)
        per_worker = ceil_div(outputs // width, workers)
        worker = WORKER_SETUP_CYCLES[True] + (cycles_per_partial * (partial_rows - 1) + loop_overhead) * per_worker
        return worker * workers + SUPERVISOR_CYCLES
    cycles_per_partial = width // min(width, per_load) + 1
    # outputs that do not fill a vector are handled in loops of their own, one per set bit below the width
    loops = outputs // width + bin(outputs & (width - 1)).count("1")
    per_worker, worker = loops // workers, WORKER_SETUP_CYCLES[False]
    if loops % workers:
        if outputs & (width - 1):
            worker += 2 * partial_rows + (13 if float_partials else 11)
        else:
            per_worker += 1
    loop_overhead = (7 if float_partials else 9) if float_output else (6 if float_partials else 8)
    worker += (cycles_per_partial * partial_rows + loop_overhead) * per_worker
    return worker * workers
