"""The cost model's parts, each against what it claims: matrix products planned over the tiles with the
AMP's channel groups, broadcast exchange, reductions of split sums, one compute set per weight update,
grouped all-reduces, host I/O outside pipeline stages, and TF's step-time estimate."""

import io
import math
from dataclasses import replace

import numpy as np
import pytest
from ipu_test_helpers import build, configure, data, ipu_model

import ipu_teach.keras as keras
from ipu_teach import bsp, hardware, ipu
from ipu_teach.autograd.cost import MatrixProduct, Reduction, VectorPass
from ipu_teach.autograd.ops.gelu import GELUOp
from ipu_teach.ipu import amp_vertex, lowering, matrix_plan, memory_layout, programs, reduce_vertex
from ipu_teach.keras.progbar import Progbar

MK2 = hardware.MK2


def flops_per_cycle(product, spec=MK2):
    plan = matrix_plan.plan(product, spec)
    return product.flops / plan.cycles(spec) / plan.tiles


def test_one_input_channel_pays_for_a_whole_channel_group():
    """A first convolution (1 channel) does 1/8 of the useful work per AMP pass of one with 8 channels."""
    one = matrix_plan.amp_cycles(rows=60, depth=9, cols=8, channels=1, spec=MK2)
    eight = matrix_plan.amp_cycles(rows=60, depth=72, cols=8, channels=8, spec=MK2)
    assert one == eight  # same passes (9 positions x 1 group x 1 group), same rows: same cycles
    assert (
        flops_per_cycle(MatrixProduct(64 * 676, 9, 32, 1)) < flops_per_cycle(MatrixProduct(64 * 121, 288, 64, 32)) / 3
    )


@pytest.mark.parametrize("zeroing", [False, True])
def test_an_fp32_1x1_worker_costs_what_its_codelet_says(zeroing):
    """The cycle counts written in poplibs' conv_partial_1x1_float_float_16.S (num_field_pos >= 3:
    46 + (2 + 4 n) x first_input_group + (n - 3) x 8; 0 positions: 24)."""
    for n in range(3, 40):
        expected = 46 + (2 + 4 * n) * zeroing + (n - 3) * 8
        assert amp_vertex._worker_1x1(n, True, True, zeroing, 4) == expected
    assert amp_vertex._worker_1x1(0, True, True, zeroing, 4) == 24


@pytest.mark.parametrize(
    "dtype, partials",
    [("float32", "float"), ("float16", "float"), ("float16", "half")],
    ids=["fp32", "fp16", "fp16.16"],
)
@pytest.mark.parametrize("kernel_positions", [1, 9])
def test_long_runs_of_positions_approach_the_peak_rate_of_their_types(dtype, partials, kernel_positions):
    """Each further output position costs about the AMP's peak rate for the types, whichever vertex, never more:
    only zeroing the partials (the first input group's pass, or the zeroing vertex before an nx1) adds to it."""
    group = MK2.channel_group(dtype)
    depth, cols = kernel_positions * 16 * group, MK2.output_channel_group(dtype, partials)
    extra = 6 * 100  # 100 more positions for each of the six workers

    def cycles(rows):
        return matrix_plan.amp_cycles(rows, depth, cols, 16 * group, MK2, dtype, partials)

    rate = 2 * extra * depth * cols / (cycles(6 * 200 + extra) - cycles(6 * 200))
    assert 0.9 * MK2.flops_per_cycle(dtype, partials) < rate <= MK2.flops_per_cycle(dtype, partials)


def test_passes_are_paid_per_input_and_output_channel_group():
    """A tile with twice the input or output channel groups pays about twice the AMP time (a bit less for the
    inputs: only the first group's pass zeroes the partials)."""
    one = matrix_plan.amp_cycles(96, 8, 16, 8, MK2)
    more_inputs = matrix_plan.amp_cycles(96, 16, 16, 16, MK2)
    more_outputs = matrix_plan.amp_cycles(96, 8, 32, 8, MK2)
    assert 1.4 < more_inputs / one < 1.9 and 1.8 < more_outputs / one < 2.1


def test_the_planner_takes_the_cheapest_split_within_the_tiles():
    product = MatrixProduct(64 * 121, 288, 64, 32)
    best = matrix_plan.plan(product, MK2)
    assert 1 <= best.tiles <= MK2.tiles
    for cols_split in (1, 2, 4, 8):
        for depth_split in (1, 2, 4):
            rows_split = min(product.rows, MK2.tiles // (cols_split * depth_split))
            other = matrix_plan._price(product, MK2, 4, rows_split, cols_split, depth_split)
            assert best.cycles(MK2) <= other.cycles(MK2)


def test_exchange_is_receiver_selected_so_a_broadcast_costs_each_receiver_its_share():
    """Every tile needs the whole (small) weight matrix: each receives it, the owners send it once."""
    product = MatrixProduct(rows=1472 * 4, depth=64, cols=8, channels=64)
    plan = matrix_plan._price(product, MK2, 4, rows_split=1472, cols_split=1, depth_split=1)
    received = (4 * 64 + 64 * 8) * 4  # four rows of activations and all the weights
    assert plan.transform_bytes == received  # not 1,472 times the weights: senders send once


def test_a_weight_laid_out_for_its_product_is_received_only_where_tiles_share_its_slices():
    """Each tile holds its 1/rows_split share of its weights slice and receives the rest; nothing when no other tile
    uses the slice. The activations are received whole, as before, and the temporaries shrink by the same bytes."""
    product = MatrixProduct(rows=1024, depth=512, cols=64, channels=512)
    laid_out = MatrixProduct(rows=1024, depth=512, cols=64, channels=512, right_laid_out=True)
    for rows_split in (1, 4):
        plain = matrix_plan._price(product, MK2, 4, rows_split, 4, 8)
        held = matrix_plan._price(laid_out, MK2, 4, rows_split, 4, 8)
        rows, depth, cols = 1024 // rows_split, 512 // 8, 64 // 4
        weights_slice = depth * cols * 4
        assert plain.transform_bytes == rows * depth * 4 + weights_slice
        assert held.transform_bytes == rows * depth * 4 + weights_slice - weights_slice // rows_split
        assert plain.temporary_bytes - held.temporary_bytes == weights_slice // rows_split
        assert held.compute_cycles == plain.compute_cycles
    # pieces: with no other tile sharing its weights slice, a tile hears nothing about it
    alone = matrix_plan._price(laid_out, MK2, 4, 1, 4, 8)
    assert matrix_plan._operand_pieces(laid_out, alone, 4)[1] == 0
    assert matrix_plan._operand_pieces(product, matrix_plan._price(product, MK2, 4, 1, 4, 8), 4)[1] == 1


def test_the_planner_swaps_a_small_batch_dense_layers_operands_as_poplin_tries():
    """A batch of 16 is 16 positions for the AMP, its passes dominated by loading weights; swapped, the 1,024
    output channels are the positions (poplin's getSwapOperandCandidates). A convolution of several kernel
    positions is not a matrix product both ways round and keeps its orientation."""
    dense = MatrixProduct(rows=16, depth=4096, cols=1024, channels=4096, right_laid_out=True)
    chosen, plan = matrix_plan.choose(dense, MK2)
    assert (chosen.rows, chosen.cols, chosen.left_laid_out, chosen.right_laid_out) == (1024, 16, True, False)
    assert plan.cycles(MK2) < matrix_plan.plan(dense, MK2).cycles(MK2)
    assert chosen.swapped() == dense and chosen.flops == dense.flops
    conv = MatrixProduct(rows=16 * 26 * 26, depth=9 * 8, cols=16, channels=8, planner="conv", kernel_positions=9)
    assert not conv.swappable and matrix_plan.choose(conv, MK2)[0] is conv
    wide = MatrixProduct(rows=4096, depth=512, cols=64, channels=512)  # many positions already: kept
    assert matrix_plan.choose(wide, MK2)[0] == wide


def test_a_swapped_plan_that_does_not_fit_the_memory_is_never_taken_for_its_speed():
    """On 16 tiles at availableMemoryProportion 0.05, the 128 x 512 by 512 x 2,048 product only fits unswapped;
    swapped it would be faster but over the memory: the planner keeps the plan that fits, as plan() does."""
    spec, options = MK2.with_tiles(16), matrix_plan.MatrixOptions(0.05)
    product = MatrixProduct(rows=128, depth=512, cols=2048, channels=512)
    fitting, faster = (
        matrix_plan.plan(product, spec, options=options),
        matrix_plan.plan(product.swapped(), spec, options=options),
    )
    allowed = options.temporary_bytes_allowed(spec)
    assert fitting.temporary_bytes <= allowed < faster.temporary_bytes and faster.cycles(spec) < fitting.cycles(spec)
    assert matrix_plan.choose(product, spec, options=options) == (product, fitting)
    assert matrix_plan.choose(product.swapped(), spec, options=options) == (product, fitting)


def test_what_no_op_of_the_step_made_is_recorded_as_laid_out_for_its_forward_product():
    """The operands no op of the recorded step made are known to its cost (``Context.laid_out_inputs``): a kernel,
    the step's data and a reshape of it are laid out for the forward product that reads them; an op's output is
    not, with or without gradients (a prediction records no autograd graph), nor is any backward product's."""
    from ipu_teach.autograd import Tensor, function, no_grad
    from ipu_teach.autograd.ops.linalg import MatMulOp
    from ipu_teach.autograd.ops.shape import ReshapeOp

    kernel = Tensor(np.zeros((8, 4), np.float32), requires_grad=True, name="dense/kernel:0")
    x = Tensor(np.zeros((2, 2, 4), np.float32))
    with function.record() as tape:
        flat = ReshapeOp.apply(x, shape=(2, 8))  # a view of the data: still the data
        hidden = MatMulOp.apply(flat, kernel)
        MatMulOp.apply(hidden, Tensor(np.zeros((4, 3), np.float32)))  # an op's output by more data
    products = [record.forward.products[0] for record in tape if record.forward.products]
    assert [(p.left_laid_out, p.right_laid_out) for p in products] == [(True, True), (False, True)]
    assert not any(p.right_laid_out or p.left_laid_out for r in tape for p in r.backward.products)
    with no_grad(), function.record() as tape:
        MatMulOp.apply(MatMulOp.apply(x.array.reshape(2, 8), kernel), kernel.array[:4])
    assert [(r.forward.products[0].left_laid_out) for r in tape] == [True, False]
    assert function.is_variable(kernel) and not function.is_variable(x)
    assert not function.is_variable(MatMulOp.apply(flat, kernel))  # an op's output is no variable


def test_a_tensor_the_step_made_keeps_its_id_so_later_data_is_never_taken_for_it():
    """What is laid out must not depend on how the host reuses memory: an op's output keeps its id until the
    recording ends, even if the step drops it, so data made afterwards (freed memory is reused first) is never taken
    for it and is laid out."""
    import sys

    from ipu_teach.autograd import Tensor, function, no_grad
    from ipu_teach.autograd.ops.linalg import MatMulOp

    kernel = Tensor(np.zeros((8, 4), np.float32), requires_grad=True, name="dense/kernel:0")
    with no_grad(), function.record() as tape:
        out = MatMulOp.apply(np.ones((2, 8), np.float32), kernel)
        held = sys.getrefcount(out)  # the recording holds one reference: its id is not free while it records
        later = [Tensor(np.ones((2, 8), np.float32)) for _ in range(64)]
        for data in later:
            MatMulOp.apply(data, kernel)
    assert sys.getrefcount(out) == held - 1  # and lets it go when the recording ends
    assert all(record.forward.products[0].left_laid_out for record in tape[1:])


def test_split_sums_are_reduced_in_compute_sets_of_their_own():
    """A depth split of 8 is reduced in one stage, of 16 in two (poplin's getNumReduceStages); the first stage's
    tiles receive every partial sum but their own row (8 x 8 outputs x the split, in float: poplin's single-input
    ReduceAdd reads one row in place), the second the 4 per output left, less their own."""
    shallow = matrix_plan._price(MatrixProduct(8, 4096, 8, 4096), MK2, 4, 8, 1, 8)
    deep = matrix_plan._price(MatrixProduct(8, 4096, 8, 4096), MK2, 4, 8, 1, 16)
    unsplit = matrix_plan._price(MatrixProduct(8, 4096, 8, 4096), MK2, 4, 8, 1, 1)
    assert len(shallow.reduce_stages) == 1 and len(deep.reduce_stages) == 2
    first, later = deep.reduce_stages
    assert first.tiles * first.received == 8 * 8 * 16 * 4 * 3 // 4 and first.messages == 3 and first.cycles > 0
    assert later.tiles * later.received == 8 * 8 * 4 * 4 * 3 // 4 and later.messages == 3
    assert deep.reduce_bytes == first.received + later.received
    assert unsplit.reduce_stages == () and unsplit.reduce_bytes == unsplit.reduce_cycles == 0


def test_a_reduce_stage_costs_poplins_reduce_add_estimate_for_a_tiles_share_of_the_outputs():
    """Each stage's tiles share its outputs in whole grains of a partials' channel group (poplin's
    partialGroupedReduce) and add their partial rows with poplin's ReduceAdd, not popops' reduction
    (lib/poplin/ConvReduce.cpp): 16 x 4096 x 1024 split 16 x 8 x 8 leaves 16 x 1024 outputs, 1,024 grains of 16 over
    its 1,024 tiles, 8 rows each."""
    (stage,) = matrix_plan._price(MatrixProduct(16, 4096, 1024, 4096), MK2, 4, 16, 8, 8).reduce_stages
    assert (stage.tiles, stage.messages, stage.received) == (1024, 7, 16 * 7 * 4)
    assert stage.cycles == reduce_vertex.cycles(16, 8, True, True, True)
    # poplibs' getReduceCycleEstimate by hand, single input: per worker ceil(16 / 4 / 6) = 1 loop of 2 cycles per
    # partial row but the tile's own + 8, after 20 of set-up; 6 workers and the supervisor's 33
    assert stage.cycles == (20 + (2 * 7 + 8) * 1) * 6 + 33


def test_the_reduce_add_estimate_takes_poplins_general_vertex_for_outputs_that_are_not_whole_vectors():
    """poplibs' getReduceCycleEstimate, general vertex: 90 float outputs are 22 vectors of 4 and a loop for the 2
    left (one set bit below 4): 23 loops, 3 a worker and a short remainder (2 x 8 + 13 cycles); 3 cycles per partial
    row and 7 a loop; a single-input vertex is taken only for whole vectors that fit 1/16 of the tile's memory."""
    assert reduce_vertex.cycles(90, 8, True, True, False) == (32 + 2 * 8 + 13 + (3 * 8 + 7) * 3) * 6
    assert not reduce_vertex.single_input(90, 8, True, MK2.sram_per_tile)
    assert reduce_vertex.single_input(96, 8, True, MK2.sram_per_tile)
    assert not reduce_vertex.single_input(100, 8, False, MK2.sram_per_tile)  # half partials: vectors of 8, not 4
    assert not reduce_vertex.single_input(4096, 4, True, MK2.sram_per_tile)  # 48 KiB exchanged: over 1/16
    # half partials load 4 a cycle: vectors of 8 at the same 2 cycles a row, so half the loops of float
    assert reduce_vertex.cycles(96, 8, False, False, True) < reduce_vertex.cycles(96, 8, True, True, True)


def test_a_reduction_has_poplins_stages_each_leaving_fewer_partials():
    """poplibs lib/poplin/ConvReducePlan.cpp: one stage below 16 partials per output, two from 16, three from 125,
    the intermediate depths those that send the fewest messages (16 -> 4 -> 1: 4 + 4 messages, not 5 + 3.2)."""
    assert matrix_plan.reduction_depths(1) == []
    assert matrix_plan.reduction_depths(15) == [1]
    assert matrix_plan.reduction_depths(16) == [4, 1]
    assert len(matrix_plan.reduction_depths(124)) == 2 and len(matrix_plan.reduction_depths(125)) == 3
    for depth in (16, 64, 124, 125, 512, 4096):
        depths = [depth, *matrix_plan.reduction_depths(depth)]
        assert all(later < earlier for earlier, later in zip(depths, depths[1:])), depths


def test_a_deeply_split_product_lowers_to_more_reduce_compute_sets_and_more_cycles():
    """More stages: more compute sets, each with its sync and its vertices' fixed cost (poplin: multi-stage
    reduction "reduces code size ... at the cost of increasing the number of cycles")."""
    product = MatrixProduct(rows=8, depth=4096, cols=8, channels=4096)
    chosen = matrix_plan.plan(product, MK2)
    assert chosen.depth_split >= 125  # a deep product: the planner splits its depth over many tiles
    steps = lowering._product_steps("dense/MatMul:0", "forward", product, MK2, 4, 0, matrix_plan.DEFAULT_OPTIONS)
    names = [step.name for step in steps]
    assert names == [
        "dense/MatMul:0/transform",
        "dense/MatMul:0",
        "dense/MatMul:0/reduce",
        "dense/MatMul:0/reduce1",
        "dense/MatMul:0/reduce2",
    ]
    received = [int(step.received.sum()) for step in steps[2:]]
    assert received[0] > received[1] > received[2] > 0  # fewer partials left after each stage
    # each stage is a compute set of its own, with its sync, in the plan's price as in the program
    syncs = chosen.cycles(MK2) - matrix_plan.ProductPlan(**{**chosen.__dict__, "reduce_stages": ()}).cycles(MK2)
    stages = sum(-(-stage.received // MK2.exchange_bytes_per_cycle) + stage.cycles for stage in chosen.reduce_stages)
    assert syncs - stages == 3 * MK2.sync_cycles_on_chip


def lowered(mode="train", accumulation=None, replicas=1):
    x, y = data(64)
    configure(replicas)
    model = ipu_model(steps_per_execution=4, accumulation=accumulation)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    return model, model.get_ipu_executable("train").graph


def test_a_matrix_product_lowers_to_rearrangement_product_and_reduction():
    _, graph = lowered()
    names = [step.name for step in graph.forward]
    products = [n for n in names if n.split("/")[1].startswith("MatMul:") and len(n.split("/")) == 2]
    assert len(products) == 2  # the two Dense layers
    for name in products:
        steps = {step.name: step for step in graph.forward}
        assert names.index(f"{name}/transform") == names.index(name) - 1
        assert steps[f"{name}/transform"].received.any() and not steps[f"{name}/transform"].cycles.any()
        assert steps[name].cycles.any() and steps[name].flops > 0


def transposed_cycles(elements_per_tile):
    vector = hardware.VECTOR
    cycles = np.ceil(elements_per_tile * vector.transpose) + vector.transpose_vertex_cycles
    return np.where(elements_per_tile > 0, cycles, 0).astype(np.int64)


def test_a_backward_product_regroups_and_transposes_each_stored_operand_element_once():
    """poplin's weightsTranspose / transposeCSActs: in the backward pass the rearrangement is a compute set too.
    popops' regroupTensor first copies the operand read as a transposed view to the tiles that transpose it, spread
    over the IPU (an exchange of its own), transposes it there (addTransposeVertices), and the product's
    rearrangement then copies the result into the plan's layout, so each element of it as stored is moved once by
    the regroup, transposed once and copied once: a 3x3 convolution's weight gradient moves its activations, not
    the 9 copies its windows view, nor the copies the tiles then receive; only the first of the serial passes
    (poplin transposes before the loop)."""
    positions, channels, filters = 20 * 56 * 56, 64, 64
    product = MatrixProduct(
        9 * channels, positions, filters, positions, "conv", kernel_positions=9, left_transposed=True
    )
    assert product.transposed_elements == product.left_elements == positions * channels
    options = matrix_plan.MatrixOptions(0.05, "half")
    planned, chosen = matrix_plan.choose(product, MK2, 2, options)
    assert chosen.serial_split > 1
    steps = lowering._product_steps("c/Conv2D:0/grad", "backward", product, MK2, 2, 0, options)
    names = [step.name for step in steps]
    stem = "c/Conv2D:0/grad"
    assert names[:4] == [f"{stem}/regroup", f"{stem}/rearrange", f"{stem}/transform", stem]
    assert [name for name in names if name.endswith(("/regroup", "/rearrange"))] == names[:2]
    per_tile = memory_layout.mapped_bytes(positions * channels, 2, MK2.tiles) // 2
    assert np.array_equal(steps[0].received, 2 * per_tile) and not steps[0].cycles.any()
    assert np.count_nonzero(per_tile) == MK2.tiles  # spread over every tile
    # then copied into the plan's layout with any operand broadcast to many tiles, each element once (to the byte a
    # tile rounds up to)
    rearrange, moved = steps[1], matrix_plan.rearranged_elements(planned, chosen)
    assert moved >= positions * channels
    assert not rearrange.cycles.any() and np.count_nonzero(rearrange.received) == chosen.tiles
    assert 0 <= int(rearrange.received.sum()) - 2 * moved < chosen.tiles
    transforms = [step for step in steps if step.name.endswith("/transform")]
    assert np.array_equal(transforms[0].cycles, transposed_cycles(per_tile))
    assert int(transforms[0].received.sum()) > 2 * product.stored_elements  # the exchange moves the copies
    assert len(transforms) > 1 and not any(step.cycles.any() for step in transforms[1:])
    untransposed = lowering._product_steps(
        "c/Conv2D:0", "forward", replace(product, left_transposed=False), MK2, 2, 0, options
    )
    assert not any(step.name.endswith("/regroup") or step.cycles[step.received > 0].any() for step in untransposed[:2])


@pytest.mark.parametrize("laid_out", [False, True])
def test_a_forward_operand_broadcast_to_more_than_7_tiles_is_first_copied_into_the_plans_layout(laid_out):
    """poplin copies an operand whose slices go to more than 7 tiles into the plan's layout before broadcasting
    them (inViewMaxBroadcastDests): an exchange of its own, each element moved once; not an operand laid out for
    the product (the copy is elided), nor one shared by 7 tiles or fewer."""
    product = MatrixProduct(rows=64, depth=1024, cols=2048, channels=1024, left_laid_out=laid_out, right_laid_out=True)
    planned, chosen = matrix_plan.choose(product, MK2)
    sharing = chosen.cols_split if planned == product else chosen.rows_split  # swapped: the input is on the right
    assert sharing > matrix_plan.MAX_BROADCAST_DESTINATIONS  # the input's slices: on many tiles
    steps = lowering._product_steps("d/MatMul:0", "forward", product, MK2, 4, 0, matrix_plan.DEFAULT_OPTIONS)
    rearranged = [step for step in steps if step.name.endswith("/rearrange")]
    assert len(rearranged) == (0 if laid_out else 1)
    if not laid_out:
        assert steps[0] is rearranged[0] and not rearranged[0].cycles.any()
        assert 0 <= int(rearranged[0].received.sum()) - 4 * 64 * 1024 < chosen.tiles  # the input, once
    few = matrix_plan._price(product, MK2, 4, rows_split=64, cols_split=7, depth_split=1)
    assert matrix_plan.rearranged_elements(product, few) == 0


def test_each_backward_product_of_a_model_has_its_transpose_compute_set():
    _, graph = lowered()
    transforms = [s for s in graph.backward if s.name.endswith("/transform")]
    assert transforms and all(step.cycles.any() and step.received.any() for step in transforms)


def test_each_weight_is_updated_in_its_own_compute_set():
    model, graph = lowered(accumulation=2)
    updates = [s.name for s in graph.update if s.phase == "update"]
    accumulations = [s.name for s in graph.update if s.phase == "accumulate"]
    weights = [w.name.rsplit(":", 1)[0] for w in model.trainable_weights]
    assert updates == [f"{w}/update" for w in weights]
    assert accumulations == [f"{w}/accumulate" for w in weights]
    flops = {s.name: s.flops for s in graph.update}
    sizes = {w.name.rsplit(":", 1)[0]: w.size for w in model.trainable_weights}
    assert all(flops[f"{w}/update"] == model.optimizer.update_flops_per_weight * n for w, n in sizes.items())


@pytest.mark.parametrize("accumulation", [None, 2])
def test_each_gradient_is_copied_to_its_weights_tiles_by_the_first_step_that_reads_it(accumulation):
    """The product that made a weight's gradient left it in its own layout: the exchange of the first compute set
    that reads it on the weight's tiles (the update, else the accumulation) moves every byte of it there, each weight
    tile hearing from the pieces its slice lies across; an update of the accumulated sum moves nothing."""
    model, graph = lowered(accumulation=accumulation)
    steps = {s.name: s for s in graph.update}
    reader, other = ("accumulate", "update") if accumulation else ("update", None)
    for w in model.trainable_weights:
        name, nbytes = w.name.rsplit(":", 1)[0], w.size * w.dtype.itemsize
        step = steps[f"{name}/{reader}"]
        assert int(step.received.sum()) == nbytes
        assert np.array_equal(step.received > 0, step.cycles > 0)  # where the step runs: the weight's tiles
        made = memory_layout.mapped_bytes(w.size, w.dtype.itemsize, MK2.tiles, 0)  # the gradient, from tile 0
        incoming, outgoing = memory_layout.relayout_messages(step.received, made)
        assert np.array_equal(step.messages, incoming) and np.array_equal(step.sends, outgoing)
        if other:
            assert not steps[f"{name}/{other}"].received.any()


def test_a_slice_hears_from_each_piece_of_the_other_layout_it_lies_across():
    incoming, outgoing = memory_layout.relayout_messages(np.array([1000, 1000, 0]), np.array([0, *[250] * 6]))
    assert incoming.tolist() == [5, 5, 0]  # 4 pieces of 250 B and the misaligned one, on average
    assert outgoing.tolist() == [0, *[1] * 6]  # 250 / 1000 + 1, to the nearest whole
    one_tile, _ = memory_layout.relayout_messages(np.array([64, 0]), np.array([0, 64]))
    assert one_tile.tolist() == [1, 0]  # never more than the other side has tiles


@pytest.mark.parametrize(
    "optimizer, slots, flops",
    [
        (keras.optimizers.SGD(), 0, 2),
        (keras.optimizers.Adam(), 2, 12),
        (keras.optimizers.Adagrad(), 1, 7),
        (keras.optimizers.Adadelta(), 2, 16),
        (keras.optimizers.Adamax(), 2, 10),
        (keras.optimizers.Nadam(), 2, 18),
        (keras.optimizers.Ftrl(), 2, 19),
        (keras.optimizers.Ftrl(l2_shrinkage_regularization_strength=0.1), 2, 22),
        (keras.optimizers.SGD(clipnorm=1.0), 0, 2 + 4),  # clipping adds its arithmetic to the update
        (keras.optimizers.Adam(clipvalue=1.0, global_clipnorm=1.0), 2, 12 + 2 + 3),
    ],
    ids=lambda value: str(value.get_config()) if isinstance(value, keras.optimizers.Optimizer) else None,
)
def test_the_optimizer_is_costed_from_what_it_declares(optimizer, slots, flops):
    """Its state per weight is optimizer state in tile memory, its arithmetic per weight the update compute
    sets: the lowering never names an optimizer, so a new one (Adagrad) is costed as it declares."""
    x, y = data(64)
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build(0)
        model.compile(optimizer, "categorical_crossentropy", steps_per_execution=4)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    graph = model.get_ipu_executable("train").graph
    weights = model.trainable_weights
    state = [m for m in graph.memory if m.category == "optimizer state"]
    assert sorted(m.name for m in state) == sorted(f"{w.name}/slot{s}" for w in weights for s in range(slots))
    assert sum(int(m.per_tile.sum()) for m in state) == slots * sum(w.size * 4 for w in weights)
    assert sum(s.flops for s in graph.update if s.phase == "update") == flops * sum(w.size for w in weights)


def test_a_new_vector_op_is_costed_from_what_it_declares():
    """GELU declares no matrix products, 5 FLOPs per element and one pass of popnn's GELU codelet: one vector
    compute set whose busiest tile pays its elements at the codelet's rate plus a vertex's fixed cost; the
    lowering never names the op."""
    x, _ = data(64)
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        keras.backend.clear_session()
        inputs = keras.Input(shape=(6,))
        model = keras.Model(inputs, keras.layers.Dense(3000, activation=lambda t: GELUOp.apply(t))(inputs))
        model.compile("sgd", "mse", steps_per_execution=4)
    model.predict(x, batch_size=16, verbose=0)
    (step,) = [s for s in model.get_ipu_executable("predict").graph.forward if "/GELU:" in s.name]
    elements = 16 * 3000  # 32.6 per tile, mapped in grains of one 8-byte vector (2 fp32): 34 on the fullest
    assert step.flops == 5 * elements
    vector = hardware.VECTOR
    assert int(step.cycles.max()) == math.ceil(34 * vector.gelu) + vector.elementwise_vertex_cycles


@pytest.mark.parametrize("buffer, expected", [(0, [40, 8, 4000, 12]), (48, [48, 4000, 12]), (10_000, [4060])])
def test_gradients_are_all_reduced_in_groups_the_buffer_allows(buffer, expected):
    assert programs.gradient_groups([40, 8, 4000, 12], buffer) == expected


def test_a_larger_cross_replica_sum_buffer_merges_collectives_and_saves_time():
    """Graphcore's default (0) all-reduces each gradient alone; merging saves a collective's latency each."""
    x, y = data(64)
    times = []
    for buffer in (0, 10_000_000):
        config = configure(2)
        config.optimizations.maximum_cross_replica_sum_buffer_size = buffer
        config.configure_ipu_system()
        model = ipu_model(steps_per_execution=2)
        model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        times.append(model.get_ipu_executable("train").seconds_per_execution)
        gradients = len(model.trainable_weights)
        labels = [label for label in model.get_ipu_executable("train").timeline.labels if "all-reduce:" in label]
        assert len(labels) == (gradients if buffer == 0 else 1)
    assert times[1] < times[0]


@pytest.mark.parametrize("buffer", [0, 10_000_000])
def test_the_report_shows_the_bytes_each_all_reduce_moved(buffer):
    """Whatever the grouping, the report's all-reduce steps move every gradient byte once per ring step."""
    from ipu_teach.profiling import build_report

    x, y = data(64)
    config = configure(2)
    config.optimizations.maximum_cross_replica_sum_buffer_size = buffer
    config.configure_ipu_system()
    model = ipu_model(steps_per_execution=2)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    executable = model.get_ipu_executable("train")
    report = build_report(model.name, "train", executable, ipu.system.current())
    moved = [step.bytesExchanged for step in report.execution.steps if "all-reduce:" in step.name]
    groups = programs.gradient_groups(executable.graph.gradient_bytes, buffer)
    assert moved == [-(-group // 2) * 2 for group in groups]  # each of the 2 replicas sends half a group
    assert sum(moved) >= sum(executable.graph.gradient_bytes)


def test_host_io_of_a_pipeline_is_not_part_of_a_stage():
    import ipu_teach.keras as keras
    from ipu_teach import ipu
    from ipu_teach.examples import tutorial_model_fn

    configure(2)
    x = np.random.default_rng(0).random((64, 28, 28, 1), np.float32)
    y = keras.utils.to_categorical(np.arange(64) % 10, 10)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn(stages=True))
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    run = model.get_ipu_executable("train").pipeline
    graph = model.get_ipu_executable("train").graph
    stage_forward = bsp.CostEngine(bsp.Sequence([step.program() for step in graph.forward]), MK2).run().seconds()
    assert sum(run.costs.forward) == pytest.approx(stage_forward)  # the stages' own ops, nothing else
    assert run.seconds > run.timeline.total  # the micro-batches' host I/O comes on top


def test_progress_bar_leaves_out_a_first_step_seen_on_its_own():
    """TF: "35s 3ms/step" for a first epoch of 937 steps whose first step compiled for 32 s."""
    stream = io.StringIO()
    bar = Progbar(937, stream=stream)
    bar.update(1, elapsed=32.0)
    bar.update(937, elapsed=32.0 + 936 * 3e-3)
    assert bar.seconds_per_step == pytest.approx(3e-3)
    assert stream.getvalue().endswith(" - 35s 3ms/step\n")


def test_progress_bar_averages_when_steps_come_in_executions():
    """With 937 steps per execution, step 1 is never seen alone: "30s 32ms/step" as in the tutorial."""
    stream = io.StringIO()
    Progbar(937, stream=stream).update(937, elapsed=30.0)
    assert stream.getvalue().endswith(" - 30s 32ms/step\n")


@pytest.mark.parametrize("bad", [-1, 2.5, True, "10MB"])
def test_the_cross_replica_sum_buffer_must_be_a_number_of_bytes(bad):
    config = configure(1)
    config.optimizations.maximum_cross_replica_sum_buffer_size = bad
    with pytest.raises(ValueError, match="maximum_cross_replica_sum_buffer_size: expected a number of bytes >= 0"):
        config.configure_ipu_system()


def test_a_reduction_reduces_on_each_tile_then_exchanges_its_partials_in_stages():
    """popops::reduce as ReductionStages.cpp plans it: each tile reduces what it holds (no exchange); while more
    than 64 partials per output are left, an intermediate stage gathers them in groups of sqrt(partials per
    output); a last stage brings the rest to the outputs' tiles. Each stage after the first exchanges float
    partials."""
    vector = hardware.VECTOR
    steps = lowering._reduction_steps("bias/grad", "backward", Reduction(MK2.tiles * 40, 5), MK2)
    assert [s.name for s in steps] == ["bias/grad", "bias/grad/stage1", "bias/grad/stage2"]
    first, intermediate, last = steps
    assert not first.received.any()
    assert int(first.cycles.max()) == math.ceil(40 * vector.reduce) + vector.reduce_vertex_cycles
    # 1472 tiles x 5 partials = 1472 per output, over 64: groups of ceil(sqrt(1472)) = 39 partials
    assert int((intermediate.received > 0).sum()) == math.ceil(MK2.tiles * 5 / 39) == 189
    assert int(intermediate.received.max()) == 39 * lowering.REDUCE_PARTIAL_BYTES
    # 189 partials left, under 64 per output: the last stage, one tile per output, 38 partials each
    assert int((last.received > 0).sum()) == 5
    assert int(last.received.max()) == 38 * lowering.REDUCE_PARTIAL_BYTES
    assert int(last.cycles.max()) == math.ceil(38 * vector.reduce) + vector.reduce_vertex_cycles


def test_a_broadcast_operand_is_exchanged_to_the_tiles_that_use_it():
    """A bias add: each tile receives the part of the bias its elements use (all of it when it holds more
    elements than the bias has values), and pays its elements at the codelet's rate."""
    (add,) = lowering._vector_steps("conv/bias", "forward", VectorPass("add", MK2.tiles * 40, 16), MK2, 4)
    assert int(add.received.max()) == 16 * 4
    assert int(add.cycles.max()) == math.ceil(40 * hardware.VECTOR.add) + hardware.VECTOR.elementwise_vertex_cycles
    (few,) = lowering._vector_steps("conv/bias", "forward", VectorPass("add", MK2.tiles * 40, 64), MK2, 4)
    assert int(few.received.max()) == 40 * 4


def test_operands_a_pass_reads_in_its_own_layout_are_exchanged_to_its_tiles_first():
    """A pass that gathers its operands (popnn's pooling, in its plan's layout) receives them on the tiles its
    elements are on, in proportion: 5 gathered values per 4 elements, 40 elements a tile, 50 values a tile."""
    (own,) = lowering._vector_steps("pool", "forward", VectorPass("add", MK2.tiles * 40), MK2, 4)
    gathering_pass = VectorPass("add", MK2.tiles * 40, gathered=MK2.tiles * 50)
    (gathering,) = lowering._vector_steps("pool", "forward", gathering_pass, MK2, 4)
    assert not own.received.any()
    assert gathering.received.tolist() == [50 * 4] * MK2.tiles
    assert gathering.cycles.tolist() == own.cycles.tolist()  # the exchange, not the vertex, is what it adds


def test_pooling_receives_its_input_and_its_gradient_in_its_plans_layout():
    """popnn's max pooling (lib/popnn/Pooling.cpp) works in a partition of its own: the forward receives the
    input it pools, the backward the input again and its output's gradient (copied to the pooled layout)."""
    model = keras.Sequential([keras.layers.MaxPooling2D(2, input_shape=(8, 8, 4))])
    model.compile(keras.optimizers.SGD(), "mse")
    graph = lowering.lower(model, "train", np.zeros((2, 8, 8, 4), np.float32), np.zeros((2, 4, 4, 4), np.float32), MK2)
    (forward,) = [s for s in graph.forward if s.name.startswith("max_pooling2d/MaxPool2D")]
    (backward,) = [s for s in graph.backward if s.name.startswith("max_pooling2d/MaxPool2D")]
    assert int(forward.received.sum()) == 2 * 8 * 8 * 4 * 4  # the input, in float
    assert int(backward.received.sum()) == (2 * 8 * 8 * 4 + 2 * 4 * 4 * 4) * 4  # the input and the gradient


def test_an_ops_vector_work_becomes_one_compute_set_per_pass_and_per_reduction_stage():
    """A softmax (popnn SOFTMAX_STABLE) is five items of vector work: its lowering has a compute set for each
    pass and each reduction stage, not one compute set for the op."""
    _, graph = lowered()
    names = [s.name for s in graph.forward if "/Softmax:" in s.name]
    base = names[0]
    assert names == [
        base,
        f"{base}/stage1",
        f"{base}/add",
        f"{base}/exp",
        f"{base}/reduction2",
        f"{base}/reduction2/stage1",
        f"{base}/divide",
    ]


def test_a_replicated_pipeline_all_reduces_each_stages_gradients_on_its_own_ipu():
    """Two replicas of a 2-stage pipeline: the IPU of stage 0 reduces stage 0's big Dense layers, the IPU of stage 1
    its small one, at the same time; the step pays for the bigger stage, not for the whole model."""
    x, y = data(64)
    configure(4)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(x.shape[1],))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Dense(256, activation="relu", name="wide")(inputs)
            hidden = keras.layers.Dense(256, activation="relu", name="big")(hidden)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(y.shape[1], name="small")(hidden)
        model = keras.Model(inputs, outputs)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "mse", steps_per_execution=4)
    model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    executable = model.get_ipu_executable("train")
    graph, timeline = executable.graph, executable.timeline
    stage_bytes = {layer: 0 for layer in ("wide", "big", "small")}
    for nbytes, layer in zip(graph.gradient_bytes, graph.gradient_layers):
        stage_bytes[layer] += nbytes
    assert stage_bytes["wide"] + stage_bytes["big"] > 10 * stage_bytes["small"] > 0
    rows = [r for r, label in enumerate(timeline.labels) if "all-reduce:" in label]
    reduced = sum(int(timeline.counts[r] * timeline.exchange[r].max()) for r in rows)

    def ring_cycles(*stages):
        gradients = [b for b, layer in zip(graph.gradient_bytes, graph.gradient_layers) if layer in stages]
        one_ipu = lowering.LoweredGraph("train", graph.spec, 8, [], [], [], [], gradient_bytes=gradients)
        run = bsp.CostEngine(programs.all_reduce(one_ipu, 2), graph.spec).run()
        return int((run.counts * run.exchange.max(axis=1)).sum())

    assert reduced == ring_cycles("wide", "big")  # the stage with the most gradients sets the time
    assert reduced < ring_cycles("wide", "big", "small")  # not the whole model on every IPU


def test_an_element_wise_op_runs_where_poplar_maps_its_output():
    """popops places an element-wise vertex on each tile its output is mapped to, and a tensor is mapped linearly
    with at least 128 bytes on each tile it uses (poputil calcLinearTileMapping): a small op runs on few tiles."""
    (small,) = lowering._vector_steps("dense/relu", "forward", VectorPass("relu", 320, 0), MK2, 4)
    assert int((small.cycles > 0).sum()) == 10  # 320 fp32 values, 32 (128 bytes) a tile
    assert int(small.cycles.max()) == math.ceil(32 * hardware.VECTOR.relu) + hardware.VECTOR.elementwise_vertex_cycles
    (half,) = lowering._vector_steps("dense/relu", "forward", VectorPass("relu", 320, 0), MK2, 2)
    assert int((half.cycles > 0).sum()) == 5  # 64 fp16 values make 128 bytes
    (large,) = lowering._vector_steps("dense/relu", "forward", VectorPass("relu", MK2.tiles * 100, 0), MK2, 4)
    assert int((large.cycles > 0).sum()) == MK2.tiles
