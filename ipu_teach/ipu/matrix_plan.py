"""Planning a matrix product over the tiles, as Poplar's convolution planner does (poplibs ``ConvPlan``).

A product ``out[rows, cols] = sum over depth`` is split over ``rows_split x cols_split x depth_split``
tiles. Each split has a price, and the planner takes the cheapest:

- the operands are first rearranged to where the split needs them (poplibs' ``transformPre``): an
  exchange in which each tile receives its slice of both operands. Exchange is receiver-selected, so a
  weight slice that many tiles need is sent once and received by all of them (a broadcast). A weight read
  by its forward product was laid out for it (``MatrixProduct.right_laid_out``), as is the step's data: a tile
  already holds its share of its slice and receives only the rest. An operand made elsewhere whose slices go to
  more than 7 tiles, or read as a transposed view (a backward product's ``x.T``), is first copied into the plan's
  layout, an exchange of its own (:func:`rearranged_elements`);
- the tiles compute on their matrix units (``convolve``): per group of input channels and of output
  channels (one per conv unit) a pass loads the weights, then each of the six workers runs through its
  share of the output positions, at poplibs' estimates of the vertex Poplar picks (:mod:`.amp_vertex`:
  ConvPartial1x1Out for a matrix product, ConvPartialnx1 for a kernel of several positions). Channels are
  taken in whole groups of ``amp_channel_group``, so a layer with 1 input channel pays for 8: this is why a
  first convolution never reaches the peak rate, nor does a tile with few positions per worker. Where the
  vector unit would be faster, it is used instead;
- when the depth is split, the partial sums are exchanged and added (``reduce``), in the partials type
  (``partialsType``: 4 bytes for "float", 2 for "half"), by poplin's ReduceAdd vertices (:mod:`.reduce_vertex`); a
  deep split is reduced in two or three stages, each a compute set with its exchange (:func:`reduction_depths`).

Each split also needs temporary memory on a tile while it runs: the rearranged operand slices and the
partial sums. Poplar only takes plans whose temporary memory fits ``availableMemoryProportion`` of the
tile's memory (default 0.6); when none fits, it splits the output channels serially (poplibs'
``serialSplit``): each serial pass needs 1/s of the memory but the rearrangement, convolution and
reduction run s times, each a compute set with its sync. A lower proportion so buys memory with time
(Graphcore's technical note "Optimising Temporary Memory Usage for Convolutions and Matmuls on the IPU").
In fp32, 16 conv units make 16 output channels per pass from groups of 8 input channels (``amp_conv_units``).
In fp16 the AMP takes input channels in groups of 16, and Poplar picks its conv units by the partials
type (poplibs ``getNumConvUnits``): with half partials 16 units make 16 output channels per pass, 4x the
fp32 rate (``fp16_flops_per_cycle``, Graphcore's 250 TFLOPS); with float partials, Poplar's default, 8 units
make 8, 2x the fp32 rate (``fp16_float_partials_flops_per_cycle``).

A plain matrix product may also be planned with its operands swapped (:func:`choose`), as poplin tries.

Every figure comes from the IPU spec (``hardware.py``); see ``lib/poplin/ConvProgramTree.hpp`` for the
compute sets a real convolution lowers to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..autograd.cost import MatrixProduct
from ..bsp.mapping import ceil_div
from ..hardware import is_half
from . import amp_vertex, reduce_vertex, tile_placement
from .reduce_vertex import PARTIAL_BYTES

DEFAULT_AVAILABLE_MEMORY_PROPORTION = 0.6
"""Poplar's default availableMemoryProportion for convolutions and matmuls (graphcore/tensorflow
``IPUConfig.convolutions.poplar_options`` docstring and the technical note above)."""


@dataclass(frozen=True)
class MatrixOptions:
    """The Poplar options of one product: ``availableMemoryProportion`` and ``partialsType``."""

    available_memory_proportion: float = DEFAULT_AVAILABLE_MEMORY_PROPORTION
    partials_type: str = "float"

    def temporary_bytes_allowed(self, spec) -> int:
        return int(self.available_memory_proportion * spec.sram_per_tile)

    def partials_for(self, dtype: str) -> str:
        """The partials type a product of ``dtype`` inputs sums in: fp32 inputs always in float (poplibs
        lib/poplin/ConvVertexType.cpp@7eac0f2: a FLOAT input's partialType is FLOAT), and the partials exchanged
        between tiles are no wider than the vertex's (ConvModel.cpp, getConvTypes); fp16 ones as ``partialsType``
        says."""
        return self.partials_type if is_half(dtype) else "float"


DEFAULT_OPTIONS = MatrixOptions()


class ReduceStage(NamedTuple):
    """One stage of a product's reduction of its partial sums, on each tile that reduces in it."""

    tiles: int
    """Tiles that reduce in this stage."""
    received: int
    """Bytes of partials one of them receives."""
    cycles: int
    """Cycles of its ReduceAdd vertex (:mod:`.reduce_vertex`)."""
    messages: int
    """Tiles it hears from: one a row of partials but the row the tile holds itself."""


@dataclass(frozen=True)
class ProductPlan:
    """How one product is split, and each part's cycles on the busiest tile."""

    rows_split: int
    cols_split: int
    depth_split: int
    amp: bool
    compute_cycles: int
    transform_bytes: int
    reduce_stages: tuple = ()
    """The partials' reduction, a :class:`ReduceStage` per stage (:func:`reduction_depths`)."""
    serial_split: int = 1
    temporary_bytes: int = 0
    """Bytes a busy tile holds while one serial pass runs: its operand slices and partial sums."""
    windows: int = 0
    """Tensor windows the convolution vertex of a busy tile connects (:func:`vertex_windows`)."""
    input_group: int = 1
    """Input channels the AMP takes at once (poplin's Plan.inChansPerGroup, ``IPUSpec.channel_group``)."""
    output_group: int = 1
    """Output channels of one group of its partials (poplin's Plan.partialChansPerGroup,
    ``IPUSpec.output_channel_group``)."""

    @property
    def tiles(self) -> int:
        return self.rows_split * self.cols_split * self.depth_split

    @property
    def reduce_bytes(self) -> int:
        """Bytes of partial sums a busy tile receives over the reduction's stages."""
        return sum(stage.received for stage in self.reduce_stages)

    @property
    def reduce_cycles(self) -> int:
        """Cycles of a busy tile's reduce vertices over the reduction's stages."""
        return sum(stage.cycles for stage in self.reduce_stages)

    def cycles(self, spec) -> int:
        """What this plan costs: per serial pass the compute, every exchange and one sync per compute set."""
        exchange = ceil_div(self.transform_bytes, spec.exchange_bytes_per_cycle)
        reduce = sum(
            ceil_div(stage.received, spec.exchange_bytes_per_cycle) + stage.cycles for stage in self.reduce_stages
        )
        syncs = 2 + len(self.reduce_stages)
        return self.serial_split * (self.compute_cycles + exchange + reduce + syncs * spec.sync_cycles_on_chip)


def _splits(limit: int):
    """Powers of two up to ``limit``: the splits the planner tries for one dimension."""
    value = 1
    while value <= max(1, limit):
        yield value
        value *= 2


def amp_cycles(
    rows: int, depth: int, cols: int, channels: int, spec, dtype="float32", partials_type: str = "float"
) -> int:
    """Cycles of one tile's AMP vertex for a ``rows x depth x cols`` piece with ``channels`` channels, its
    partial sums in ``partials_type`` (which sets how many conv units, so output channels, a pass makes): as
    poplibs estimates the vertex Poplar picks, ConvPartial1x1Out for one kernel position and ConvPartialnx1
    for more (:mod:`.amp_vertex`)."""
    in_groups = ceil_div(channels, spec.channel_group(dtype))
    conv_units = spec.output_channel_group(dtype, partials_type)
    out_groups = ceil_div(cols, conv_units)
    kernel_positions = ceil_div(depth, channels)
    fp32 = not is_half(dtype)
    float_partials = fp32 or not is_half(partials_type)
    if kernel_positions == 1:
        return amp_vertex.one_by_one_cycles(
            rows, in_groups, out_groups, fp32, float_partials, conv_units, spec.threads_per_tile
        )
    return amp_vertex.n_by_one_cycles(
        rows, kernel_positions, in_groups, out_groups, fp32, float_partials, conv_units, spec.threads_per_tile
    )


def vertex_windows(in_groups: int, out_groups: int) -> int:
    """The tensor windows one tile's convolution vertex is connected to, as poplibs builds it
    (lib/poplin/ConvVertices.cpp, createConvPartialAmpVertex and the MAC vertices alike): one input window per
    input-channel group, one output window per output-channel group and one weights window per pair of them.
    So a wider layer's product has more of them per tile: the graph Poplar compiles grows with its weights."""
    return in_groups * out_groups + in_groups + out_groups


def vector_cycles(flops: int, spec, vertices: int = 1) -> int:
    """Cycles of one tile doing ``flops`` on its vector unit, plus each vertex's fixed cost."""
    return ceil_div(flops, spec.vector_flops_per_cycle) + spec.vertex_overhead_cycles * vertices


def reduction_depths(partials_depth: int) -> list:
    """The partials per output left after each stage of a convolution's reduction of ``partials_depth`` partial sums
    per output (the depth split), the last 1: poplin splits a reduction of 16 or more partials into two stages
    and of 125 or more into three (its default ``enableMultiStageReduce``, "to significantly reduce code size ...
    at the cost of increasing the number of cycles"), each a compute set ``Reduce<i>`` with its exchange, the
    stages' depths chosen to send the fewest messages (poplibs lib/poplin/ConvReducePlan.cpp,
    getNumReduceStages and getMultiStageReducePlanAndCost; lib/poplin/ConvReduce.cpp, multiStageGroupedReduce).

    >>> reduction_depths(8), reduction_depths(16), reduction_depths(512)
    ([1], [4, 1], [64, 8, 1])
    """
    if partials_depth <= 1:
        return []
    stages = 3 if partials_depth >= 125 else 2 if partials_depth >= 16 else 1
    return _fewest_messages(partials_depth, stages)[0] + [1]


def _fewest_messages(depth: int, stages: int) -> tuple:
    """``(intermediate depths, messages per tile)`` of reducing ``depth`` partials in ``stages`` stages (poplin's
    getMultiStageReducePlanAndCost: the next depth is depth^((stages-1)/stages), rounded down or up, whichever
    sends fewer messages in all)."""
    if stages == 1:
        return [], float(depth)
    down = int(math.pow(depth, (stages - 1.0) / stages))
    plans = []
    for following in (down, down + 1):
        rest, messages = _fewest_messages(following, stages - 1)
        plans.append(([following, *rest], messages + depth / following))
    return plans[0] if plans[0][1] < plans[1][1] else plans[1]


def choose(product: MatrixProduct, spec, itemsize: int = 4, options: MatrixOptions = DEFAULT_OPTIONS) -> tuple:
    """``(product, plan)``: the cheaper of :func:`plan` of ``product`` and, where it is a plain matrix product,
    of its swapped form (``MatrixProduct.swapped``). Poplin's planner tries both for every product
    (lib/poplin/ConvPlan.cpp@7eac0f2, getSwapOperandCandidates: "swapped operands ... are more likely to be
    optimal" for fully connected layers): a batch of 16 makes poor use of the AMP as its positions, while the
    1,024 output channels of the swapped product fill it.

    Example: one Dense layer, 4,096 -> 1,024 features, on a batch of 16

    >>> from ipu_teach import hardware
    >>> from ipu_teach.autograd.cost import MatrixProduct
    >>> from ipu_teach.ipu import matrix_plan
    >>> dense = MatrixProduct(rows=16, depth=4096, cols=1024, channels=4096, right_laid_out=True)
    >>> chosen, _ = matrix_plan.choose(dense, hardware.MK2)
    >>> chosen.rows, chosen.cols, chosen.left_laid_out
    (1024, 16, True)
    """
    candidates = [product, product.swapped()] if product.swappable else [product]
    allowed = options.temporary_bytes_allowed(spec)
    return min(
        ((p, plan(p, spec, itemsize, options)) for p in candidates),
        key=lambda chosen: _preference(chosen[1], spec, allowed),
    )


def plan(product: MatrixProduct, spec, itemsize: int = 4, options: MatrixOptions = DEFAULT_OPTIONS) -> ProductPlan:
    """The cheapest split of ``product`` over ``spec.tiles`` tiles whose temporary memory fits the options'
    share of a tile; serial splits only where no plan fits without them (the least memory if none fits)."""
    dtype = "float16" if itemsize == 2 else "float32"
    in_group, out_group = spec.channel_group(dtype), spec.output_channel_group(dtype, options.partials_for(dtype))
    allowed = options.temporary_bytes_allowed(spec)
    tried = []
    for serial in _splits(ceil_div(product.cols, out_group)):
        candidates = []
        for cols_split in _splits(ceil_div(product.cols, out_group)):
            for depth_split in _splits(ceil_div(product.depth, in_group)):
                if cols_split * depth_split > spec.tiles:
                    continue
                rows_split = min(product.rows, spec.tiles // (cols_split * depth_split))
                candidates.append(_price(product, spec, itemsize, rows_split, cols_split, depth_split, serial, options))
        best = min(candidates, key=lambda candidate: _preference(candidate, spec, allowed))
        if best.temporary_bytes <= allowed:
            return best
        tried += candidates
    return min(tried, key=lambda candidate: _preference(candidate, spec, allowed))


def _preference(candidate: ProductPlan, spec, allowed: int) -> tuple:
    """How the planner ranks plans (the smallest first): one whose temporary memory fits ``allowed`` before one that
    does not, then the fastest of those that fit, the least memory of those that do not."""
    fits = candidate.temporary_bytes <= allowed
    return (not fits, candidate.cycles(spec) if fits else candidate.temporary_bytes)


def _price(
    product, spec, itemsize, rows_split, cols_split, depth_split, serial=1, options: MatrixOptions = DEFAULT_OPTIONS
) -> ProductPlan:
    dtype = "float16" if itemsize == 2 else "float32"
    partials_type = options.partials_for(dtype)
    partial_bytes = PARTIAL_BYTES[partials_type]
    rows = ceil_div(product.rows, rows_split)
    cols = ceil_div(ceil_div(product.cols, cols_split), serial)  # one serial pass's share of the columns
    depth = ceil_div(product.depth, depth_split)
    channels = min(product.channels, depth)
    in_group, out_group = spec.channel_group(dtype), spec.output_channel_group(dtype, partials_type)
    amp = amp_cycles(rows, depth, cols, channels, spec, dtype, partials_type)
    vector = vector_cycles(2 * rows * depth * cols, spec, spec.threads_per_tile)
    tiles = rows_split * cols_split * depth_split
    # the left operand's slices are shared by the cols' split, the right one's by the rows' split
    left, left_sent = _moved(rows * depth, product.rows * product.depth, cols_split, product.left_laid_out)
    right, right_sent = _moved(depth * cols, product.depth * product.cols, rows_split, product.right_laid_out)
    received = (left + right) * itemsize
    sent = ceil_div((left_sent + right_sent) * itemsize, spec.tiles * serial)
    reduce_stages, depth_in = [], depth_split
    float_partials = partials_type == "float"
    block, groups = rows * cols, rows_split * cols_split  # the outputs a group of depth_split tiles holds partials of
    block_grains = ceil_div(block, out_group)
    for depth_out in reduction_depths(depth_split):
        # poplin's partialGroupedReduce: each group's depth_split tiles make depth_out sections, and each section
        # splits the group's outputs over its tiles in grains of a partials' channel group; a tile adds the partial
        # rows of its outputs (poplin's ReduceAdd), one row its own, the rest heard from the tiles holding them
        section = max(1, depth_split // depth_out)
        reducing = min(tiles, groups * depth_out * min(section, block_grains))
        reduced, partial_rows = min(block, ceil_div(block_grains, section) * out_group), ceil_div(depth_in, depth_out)
        single = reduce_vertex.single_input(reduced, partial_rows, float_partials, spec.sram_per_tile)
        float_output = float_partials if depth_out > 1 else not is_half(dtype)
        cycles = reduce_vertex.cycles(
            reduced, partial_rows, float_partials, float_output, single, spec.threads_per_tile
        )
        heard = partial_rows - 1
        reduce_stages.append(ReduceStage(reducing, reduced * heard * partial_bytes, cycles, heard))
        depth_in = depth_out
    # the first stage's partials are the most a tile receives at once; later stages reuse their memory
    temporary = received + rows * cols * partial_bytes + (reduce_stages[0].received if reduce_stages else 0)
    windows = vertex_windows(ceil_div(channels, in_group), ceil_div(cols, out_group))
    return ProductPlan(
        rows_split,
        cols_split,
        depth_split,
        amp <= vector,
        min(amp, vector),
        max(received, sent),
        tuple(reduce_stages),
        serial,
        temporary,
        windows,
        in_group,
        out_group,
    )


def _moved(slice_elements: int, elements: int, sharing: int, laid_out: bool) -> tuple:
    """``(received, sent)``: the elements of one operand a busy tile receives (its slice) and those sent in all (the
    whole operand, each piece once). An operand laid out for the product is spread over the ``sharing`` tiles that
    use each slice: a tile receives the rest of its slice, and nothing is sent where no other tile shares it."""
    if not laid_out:
        return slice_elements, elements
    return slice_elements - slice_elements // sharing, elements if sharing > 1 else 0


MAX_BROADCAST_DESTINATIONS = 7
"""The most tiles an operand slice is broadcast to in the layout it arrives in: beyond it poplin first copies the
operand into the plan's layout, so that the broadcast reads one layout (lib/poplin/Convolution.cpp@7eac0f2:
inViewMaxBroadcastDests and weightViewMaxBroadcastDests, 7; "rearranging the data once and broadcasting the
rearranged data ... trades increased execution time for reduced memory usage")."""


def rearranged_elements(product: MatrixProduct, chosen: ProductPlan) -> int:
    """Elements of the operands poplin copies into the plan's layout before the product's own exchange (its
    ``actsRearranged`` and ``weightsRearranged``, postTranspose copies of convolutionPreprocess): an operand read as a
    transposed view (``MatrixProduct.left_transposed``, ``right_transposed``: the grouping poplin detects is 1) or
    whose slices are shared by more than :data:`MAX_BROADCAST_DESTINATIONS` tiles (the input by the columns' split,
    the weights by the rows'), unless it was laid out for the product (the copy is then elided). Each element is
    copied once, as stored.

    Example: a Dense layer's weights are laid out for it, its input from the layer before is not

    >>> from ipu_teach import hardware
    >>> from ipu_teach.autograd.cost import MatrixProduct
    >>> from ipu_teach.ipu import matrix_plan
    >>> dense = MatrixProduct(rows=32, depth=784, cols=128, channels=784, right_laid_out=True)
    >>> split = matrix_plan._price(dense, hardware.MK2, 4, rows_split=8, cols_split=8, depth_split=1)
    >>> matrix_plan.rearranged_elements(dense, split)  # the input, broadcast to 8 tiles
    25088
    """
    left = product.left_transposed or chosen.cols_split > MAX_BROADCAST_DESTINATIONS
    right = product.right_transposed or chosen.rows_split > MAX_BROADCAST_DESTINATIONS
    return (0 if product.left_laid_out or not left else product.left_elements) + (
        0 if product.right_laid_out or not right else product.right_elements
    )


ACTIVATIONS_BYTES_PER_TILE = 128
"""The least of a product's input operand Poplar maps on a tile, "to reduce the amount of exchange code"
(poplibs lib/poplin/Convolution.cpp@7eac0f2, mapActivationsOrWeights: minBytesPerTile 128 for activations)."""
WEIGHTS_BYTES_PER_TILE = 256
"""The least of a product's weights operand Poplar maps on a tile (the same line: 256 for weights)."""


def transform_messages(product: MatrixProduct, chosen: ProductPlan, itemsize: int = 4) -> int:
    """Messages a busy tile receives in one serial pass's rearrangement, one from each tile that sends it a piece
    of its two operand slices (what its exchange code grows with, ``hardware.CODE``). Poplar lays each operand
    out for the plan: a slice spread over the tiles that use it (lib/poplin/Convolution.cpp@7eac0f2,
    mapActivationsOrWeights: "such that the exchange required during the convolution operation is minimized"),
    at least 128 bytes of activations and 256 of weights a tile "to reduce the amount of exchange code", in whole
    grains of the plan's channel groups (its ``grainSize``: ``inChansPerGroup`` elements of activations,
    ``inChansPerGroup x partialChansPerGroup`` of weights; poputil's TensorUseTracker maps at least
    ``minGrainsPerTile`` grains a tile). So a tile hears about its input slice from the tiles of the columns' split
    and about its weights slice from those of the rows' split, no more than the slice's pieces. The input slice is
    the tile's positions
    times its input channels: a convolution's kernel positions read the same elements (its halo aside), they are
    not sent again.

    Example:

    >>> from ipu_teach import hardware
    >>> from ipu_teach.autograd.cost import MatrixProduct
    >>> from ipu_teach.ipu import matrix_plan
    >>> product = MatrixProduct(rows=32, depth=784, cols=128, channels=784)
    >>> rows_only = matrix_plan._price(product, hardware.MK2, 4, rows_split=32, cols_split=1, depth_split=1)
    >>> matrix_plan.transform_messages(product, rows_only)  # the whole input row; weights from the 32 tiles sharing it
    33
    """
    input_pieces, weights_pieces = _operand_pieces(product, chosen, itemsize)
    return input_pieces + weights_pieces


def transform_sends(product: MatrixProduct, chosen: ProductPlan, itemsize: int = 4) -> int:
    """Messages a busy tile sends in one serial pass's rearrangement: each piece of an operand slice is sent
    once and heard by every tile sharing the slice (exchange is receiver-selected), and the pieces of all the
    slices are spread evenly over the busy tiles. As a slice is in no more pieces than tiles share it, a tile
    sends at most one piece of each operand.

    Example: a 3x3 convolution's output channels split over 256 tiles, each hearing from 128 of them

    >>> from ipu_teach.autograd.cost import MatrixProduct
    >>> from ipu_teach.hardware import MK2
    >>> from ipu_teach.ipu.matrix_plan import _price, transform_messages, transform_sends
    >>> conv = MatrixProduct(rows=64, depth=9 * 64, cols=4096, channels=64, planner="conv")
    >>> plan = _price(conv, MK2, 4, rows_split=1, cols_split=256, depth_split=1)
    >>> transform_messages(conv, plan), transform_sends(conv, plan)
    (129, 2)
    """
    input_pieces, weights_pieces = _operand_pieces(product, chosen, itemsize)
    # (rows x depth splits) input slices of input_pieces each, (cols x depth splits) weights slices of
    # weights_pieces each, over rows x cols x depth splits tiles
    return ceil_div(input_pieces, chosen.cols_split) + ceil_div(weights_pieces, chosen.rows_split)


def _operand_pieces(product: MatrixProduct, chosen: ProductPlan, itemsize: int) -> tuple:
    """``(input, weights)``: the pieces of a busy tile's two operand slices, each on another tile
    (:func:`transform_messages`)."""
    rows = ceil_div(product.rows, chosen.rows_split)
    depth = ceil_div(product.depth, chosen.depth_split)
    channels = min(product.channels, depth)
    cols = ceil_div(ceil_div(product.cols, chosen.cols_split), chosen.serial_split)

    def pieces(elements: int, sharing: int, least_bytes: int, grain: int, laid_out: bool) -> int:
        least = ceil_div(ceil_div(least_bytes, itemsize), grain) * grain  # whole grains, at least least_bytes
        held = max(1, min(sharing, ceil_div(elements, least)))
        return held - 1 if laid_out else held  # a slice laid out for the product has one piece on the tile itself

    input_grain, weights_grain = chosen.input_group, chosen.input_group * chosen.output_group
    return (
        pieces(rows * channels, chosen.cols_split, ACTIVATIONS_BYTES_PER_TILE, input_grain, product.left_laid_out),
        pieces(depth * cols, chosen.rows_split, WEIGHTS_BYTES_PER_TILE, weights_grain, product.right_laid_out),
    )


def channel_tiles(product: MatrixProduct, planned: MatrixProduct, chosen: ProductPlan) -> int:
    """Tiles the outputs of one output channel of ``product`` (a column of its result) end on, as ``planned``
    (``product`` or, swapped, its transpose: :func:`choose`) is split by ``chosen``. A bias added to them is laid out
    there: poplin's ``createBiases`` maps each bias element to one of the tiles holding its channel
    (lib/poplin/Convolution.cpp@7eac0f2, mapBiases, by poputil's TensorUseTracker), and the other tiles receive it.
    Without a depth split a block of outputs stays on the tile that computed it. With one, the reduction's last stage
    gives each of a block's reducing tiles a run of consecutive grains of ``output_group`` outputs, the block's
    partials ordered by output-channel group first, then by position (Convolution.cpp, the partials' shape
    ``[G/cgpg][Co/cpg][N]...[cgpg][cpg]``; ConvReduce.cpp partialGroupedReduce; poputil splitRegions): a channel of
    the planned result is one channel group's consecutive grains, a position (a swapped plan's channel) a grain in
    each channel group.

    Example: one Dense layer on a batch of 16, planned swapped: each feature's 16 outputs are one grain, on one tile

    >>> from ipu_teach import hardware
    >>> from ipu_teach.autograd.cost import MatrixProduct
    >>> from ipu_teach.ipu import matrix_plan
    >>> dense = MatrixProduct(rows=16, depth=4096, cols=1024, channels=4096, right_laid_out=True)
    >>> planned, chosen = matrix_plan.choose(dense, hardware.MK2)
    >>> matrix_plan.channel_tiles(dense, planned, chosen)
    1
    """
    rows = ceil_div(planned.rows, chosen.rows_split)
    groups = ceil_div(ceil_div(ceil_div(planned.cols, chosen.cols_split), chosen.serial_split), chosen.output_group)
    held = ceil_div(rows * groups, min(chosen.depth_split, rows * groups))  # consecutive grains a reducing tile holds
    if planned is product:  # a channel group's rows grains, from grain g * rows on: the tiles of each, on average
        first = np.arange(groups) * rows
        spans = (first + rows - 1) // held - first // held + 1
        return chosen.rows_split * ceil_div(int(spans.sum()), groups)
    # swapped: a position's grain in each channel group, rows apart
    return chosen.cols_split * len(np.unique(np.arange(groups) * rows // held))


def per_tile(value: int, tiles: int, spec) -> np.ndarray:
    """A per-tile array with ``value`` on each of the ``tiles`` tiles the plan uses, placed where poplin starts a
    plan (:data:`.tile_placement.PRODUCT_START_TILE`)."""
    used = np.full(min(tiles, spec.tiles), value, dtype=np.int64)
    return tile_placement.place(used, tile_placement.PRODUCT_START_TILE, spec.tiles)
