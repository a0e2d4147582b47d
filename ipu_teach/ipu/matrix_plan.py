"""Planning a matrix product over the tiles, as Poplar's convolution planner does (poplibs ``ConvPlan``).

A product ``out[rows, cols] = sum over depth`` is split over ``rows_split x cols_split x depth_split``
tiles. Each split has a price, and the planner takes the cheapest:

- the operands are first rearranged to where the split needs them (poplibs' ``transformPre``): an
  exchange in which each tile receives its slice of both operands. Exchange is receiver-selected, so a
  weight slice that many tiles need is sent once and received by all of them (a broadcast);
- the tiles compute on their matrix units (``convolve``): per kernel position and channel group a
  pass that costs a fixed overhead plus one group-wide multiply per row. Channels are taken in whole
  groups of ``amp_channel_group``, so a layer with 1 input channel pays for 8: this is why a first
  convolution never reaches the peak rate. Where the vector unit would be faster, it is used instead;
- when the depth is split, the partial sums are exchanged and added (``reduce``).

Every figure comes from the IPU spec (``hardware.py``); see ``lib/poplin/ConvProgramTree.hpp`` for the
compute sets a real convolution lowers to.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..autograd.cost import MatrixProduct
from ..bsp.mapping import ceil_div

PARTIAL_BYTES = 4
"""Partial sums are kept in fp32 (poplibs' default partialsType for fp32 and fp16 convolutions)."""


@dataclass(frozen=True)
class ProductPlan:
    """How one product is split, and each part's cycles on the busiest tile."""

    rows_split: int
    cols_split: int
    depth_split: int
    amp: bool
    compute_cycles: int
    transform_bytes: int
    reduce_bytes: int
    reduce_cycles: int

    @property
    def tiles(self) -> int:
        return self.rows_split * self.cols_split * self.depth_split

    def cycles(self, spec) -> int:
        """What this plan costs: the compute, both exchanges and one sync per compute set."""
        exchange = ceil_div(self.transform_bytes, spec.exchange_bytes_per_cycle)
        reduce = ceil_div(self.reduce_bytes, spec.exchange_bytes_per_cycle) + self.reduce_cycles
        syncs = 2 + (self.depth_split > 1)
        return self.compute_cycles + exchange + reduce + syncs * spec.sync_cycles_on_chip


def _splits(limit: int):
    """Powers of two up to ``limit``: the splits the planner tries for one dimension."""
    value = 1
    while value <= max(1, limit):
        yield value
        value *= 2


def amp_cycles(rows: int, depth: int, cols: int, channels: int, spec) -> int:
    """Cycles of one tile's AMP vertex for a ``rows x depth x cols`` piece with ``channels`` channels."""
    group, threads = spec.amp_channel_group, spec.threads_per_tile
    positions = ceil_div(depth, channels)
    passes = positions * ceil_div(channels, group) * ceil_div(cols, group)
    # one row on one worker: a group of multiply-adds at the AMP's rate, in the worker's own issue slots
    per_row = ceil_div(2 * group * group, spec.fp32_flops_per_cycle) * spec.worker_cycles
    return spec.vertex_overhead_cycles + passes * (spec.amp_pass_cycles + ceil_div(rows, threads) * per_row)


def vector_cycles(flops: int, spec, vertices: int = 1) -> int:
    """Cycles of one tile doing ``flops`` on its vector unit, plus each vertex's fixed cost."""
    return ceil_div(flops, spec.vector_flops_per_cycle) + spec.vertex_overhead_cycles * vertices


def plan(product: MatrixProduct, spec, itemsize: int = 4) -> ProductPlan:
    """The cheapest split of ``product`` over ``spec.tiles`` tiles."""
    best, best_cycles = None, None
    group = spec.amp_channel_group
    for cols_split in _splits(ceil_div(product.cols, group)):
        for depth_split in _splits(ceil_div(product.depth, group)):
            if cols_split * depth_split > spec.tiles:
                continue
            rows_split = min(product.rows, spec.tiles // (cols_split * depth_split))
            candidate = _price(product, spec, itemsize, rows_split, cols_split, depth_split)
            cycles = candidate.cycles(spec)
            if best is None or cycles < best_cycles:
                best, best_cycles = candidate, cycles
    return best


def _price(product, spec, itemsize, rows_split, cols_split, depth_split) -> ProductPlan:
    rows = ceil_div(product.rows, rows_split)
    cols = ceil_div(product.cols, cols_split)
    depth = ceil_div(product.depth, depth_split)
    channels = min(product.channels, depth)
    amp = amp_cycles(rows, depth, cols, channels, spec)
    vector = vector_cycles(2 * rows * depth * cols, spec, spec.threads_per_tile)
    tiles = rows_split * cols_split * depth_split
    received = (rows * depth + depth * cols) * itemsize
    sent = ceil_div((product.rows * product.depth + product.depth * product.cols) * itemsize, spec.tiles)
    reduce_bytes = reduce_cycles = 0
    if depth_split > 1:
        partials = product.rows * product.cols * depth_split  # each output's partial sums, one per depth slice
        reduce_bytes = ceil_div(partials * PARTIAL_BYTES, tiles)
        reduce_cycles = vector_cycles(ceil_div(partials, tiles), spec)
    return ProductPlan(rows_split, cols_split, depth_split, amp <= vector, min(amp, vector), max(received, sent),
                       reduce_bytes, reduce_cycles)


def per_tile(cycles: int, tiles: int, spec) -> np.ndarray:
    """A per-tile array with ``cycles`` on the first ``tiles`` tiles (the ones the plan uses)."""
    array = np.zeros(spec.tiles, dtype=np.int64)
    array[:min(tiles, spec.tiles)] = cycles
    return array
