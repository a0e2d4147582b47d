"""Tile memory as PopVision shows it: not-always-live tensors share memory, so a tile needs the peak of what is
live at once (and out of memory comes from that peak); inference keeps activations too; code grows with the
program (codelets, exchanges, steps, vertices), never with the bytes it moves."""

from dataclasses import replace

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import bsp, hardware, ipu
from ipu_teach.ipu import memory_layout, out_of_memory

WIDTH = 64


def pre_compiled_system(tiles):
    """A fresh session and one IPU of ``tiles`` tiles that compiles without running (PRE_COMPILE)."""
    keras.backend.clear_session()
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = tiles
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()


def compile_chain(mode, layers, batch, tiles, width=WIDTH):
    """The executable of a chain of ``layers`` Dense(width, relu) layers, compiled for ``mode`` on ``tiles``
    tiles without running (PRE_COMPILE)."""
    pre_compiled_system(tiles)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(width,))
        x = inputs
        for _ in range(layers):
            x = keras.layers.Dense(width, activation="relu")(x)
        model = keras.Model(inputs, x)
        model.compile("sgd", "mse", steps_per_execution=1)
        data = np.zeros((batch, width), np.float32)
        if mode == "predict":
            model.predict(data, batch_size=batch, verbose=0)
        else:
            model.fit(data, data, batch_size=batch, verbose=0)
    return model.get_ipu_executable(mode)


def test_a_tile_needs_its_always_live_bytes_plus_the_peak_of_the_rest():
    always = np.array([10, 10, 10])
    first, second, third = np.array([100, 0, 5]), np.array([60, 60, 5]), np.array([1, 1, 1])
    # first and second are never live together (steps 0-1 and 2-3); third overlaps both
    allocated = bsp.allocated_per_tile(always, [(first, 0, 1), (second, 2, 3), (third, 1, 2)], steps=4)
    assert allocated.tolist() == [10 + 101, 10 + 61, 10 + 6]
    # a range past the program's end is cut there; nothing not-always-live leaves the always-live bytes
    assert bsp.allocated_per_tile(always, [(first, 3, 99)], steps=4).tolist() == [110, 10, 15]
    assert bsp.allocated_per_tile(always, [], steps=4).tolist() == [10, 10, 10]


def test_inference_keeps_each_activation_until_the_next_op_has_read_it():
    executable = compile_chain("predict", layers=8, batch=2048, tiles=4)
    graph = executable.graph
    activations = [m for m in graph.memory if m.category == "activations"]
    assert len(activations) == 8 * 3  # MatMul, Add and ReLU outputs of each layer
    assert all(not m.always_live and m.popvision_category == "not-always-live variables" for m in activations)
    names = [s.name for s in graph.steps]
    matmul = next(m for m in activations if m.name == "dense_1/MatMul:3/output")
    assert names[matmul.live_from] == "dense_1/MatMul:3" and names[matmul.live_until] == "dense_1/Add:4"
    # they share memory: the tile needs far less than their sum, and no more than the liveness peak
    everything = sum(m.per_tile for m in graph.memory)
    allocated = graph.tile_memory()
    assert allocated.max() < everything.max() / 3
    always = sum(m.per_tile for m in graph.memory if m.always_live)
    live = [(m.per_tile, *m.live) for m in graph.memory if not m.always_live]
    per_step = [sum((p for p, a, b in live if a <= k <= b), np.zeros(4, np.int64)) for k in range(len(names))]
    np.testing.assert_array_equal(allocated, always + np.max(per_step, axis=0))


def test_out_of_memory_comes_from_the_liveness_peak_on_the_worst_tile():
    sram = hardware.MK2.sram_per_tile
    fits = compile_chain("predict", layers=8, batch=2048, tiles=4)
    summed = sum(m.per_tile for m in fits.graph.memory)
    assert summed.max() > 5 * sram and fits.graph.tile_memory().max() <= sram  # 8 layers of activations, reused
    with pytest.raises(ipu.ModelOutOfMemoryError) as caught:
        compile_chain("predict", layers=1, batch=16384, tiles=4)  # one activation alone does not fit
    error = caught.value
    assert error.needed == int(error.graph.tile_memory()[error.tile]) == int(error.graph.tile_memory().max()) > sram
    assert "activations" in dict(error.categories)  # one activation alone overflows the tile


def test_code_does_not_grow_with_the_bytes_the_program_moves_or_computes():
    graph = compile_chain("train", layers=2, batch=512, tiles=16).graph
    heavier = [replace(s, cycles=s.cycles * 8, received=s.received * 8) for s in graph.steps]  # 8x the batch
    code, heavier_code = (memory_layout.code_memory(steps, graph.spec) for steps in (graph.steps, heavier))
    for item, heavier_item in zip(code, heavier_code, strict=True):
        np.testing.assert_array_equal(item.per_tile, heavier_item.per_tile, err_msg=item.category)
    (exchange_code,) = [m.per_tile for m in graph.memory if m.category == "internal exchange code"]
    np.testing.assert_array_equal(
        exchange_code, memory_layout.exchange_code(memory_layout.compiled_steps(graph.steps), graph.spec)
    )
    assert exchange_code.max() > 0


def step_on(name, computing=(), receiving=(), tiles=8, messages=None):
    """A lowered step computing on the tiles ``computing`` and receiving 512 bytes on each of ``receiving``."""
    from ipu_teach.ipu.lowering import LoweredStep

    cycles, received = np.zeros(tiles, np.int64), np.zeros(tiles, np.int64)
    cycles[list(computing)] = 100
    received[list(receiving)] = 512
    return LoweredStep(name, "forward", 0, cycles, received, messages=messages)


def test_an_exchange_s_code_is_on_its_sending_and_receiving_tiles_and_grows_with_its_messages():
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=8)
    made = step_on("a/Op:0", computing=[0, 1])  # what tiles 0-1 make, tiles 4-7 receive
    code = memory_layout.exchange_code([made, step_on("b/Op:1", computing=[4], receiving=[4, 5, 6, 7])], spec)
    assert (code[[0, 1, 4, 5, 6, 7]] > 0).all() and not code[[2, 3]].any()  # tiles 2-3 take no part
    # the 2,048 bytes spread evenly over the 2 senders: each receiver's 512 come from one
    receiver = c.exchange_instructions_per_exchange + 1 * c.exchange_instructions_per_message_received
    sender = c.exchange_instructions_per_exchange + 1 * c.exchange_instructions_per_message_sent
    assert code.tolist() == [sender * c.instruction_bytes] * 2 + [0, 0] + [receiver * c.instruction_bytes] * 4
    # more tiles exchanging: more tiles hold code, and the total grows
    wider = memory_layout.exchange_code([made, step_on("b/Op:1", computing=[2], receiving=range(2, 8))], spec)
    assert np.count_nonzero(wider) > np.count_nonzero(code) and wider.sum() > code.sum()
    # a tile that hears from more senders (the plan says so) holds more code; a second exchange adds its own
    known = memory_layout.exchange_code([made, step_on("b/Op:1", [4], [4, 5, 6, 7], messages=np.full(8, 5))], spec)
    assert (known[4:] > code[4:]).all() and (known[:2] > code[:2]).all()
    twice = memory_layout.exchange_code([made, step_on("b/Op:1", [4], [4, 5, 6, 7])] * 2, spec)
    np.testing.assert_array_equal(twice, 2 * code)


def test_a_tile_that_both_sends_and_receives_in_an_exchange_sets_it_up_once():
    """One instruction stream per tile and exchange: its set-up and wind-down once, whether the tile sends,
    receives or both; its messages each cost what they cost."""
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=8)
    made = step_on("a/Op:0", computing=[0, 1])  # tiles 0-1 make what tiles 1-2 then receive
    code = memory_layout.exchange_code([made, step_on("b/Op:1", computing=[1, 2], receiving=[1, 2])], spec)
    incoming, outgoing = memory_layout.exchange_messages(np.array([0, 512, 512] + [0] * 5), np.arange(8) < 2)
    assert incoming[1] == outgoing[1] == 1  # tile 1 both hears a message and sends one
    received, sent = c.exchange_instructions_per_message_received, c.exchange_instructions_per_message_sent
    per_message = incoming * received + outgoing * sent
    expected = np.where(per_message > 0, c.exchange_instructions_per_exchange, 0) + per_message
    assert code.tolist() == (expected * c.instruction_bytes).tolist()
    assert code[1] == (c.exchange_instructions_per_exchange + 2 + 1) * c.instruction_bytes


def test_a_bias_is_exchanged_only_where_the_framework_does_not_lay_it_out_for_its_add():
    """Graphcore's TensorFlow fuses a Dense layer's product with its bias add (matmul_biasadd) and lays the bias out
    on the product's output: a tile receives only the bias of its channels held by other tiles, none when each
    channel's outputs are on one tile (a small batch's product, planned swapped). PopART adds a PopTorch Linear's bias
    with a plain Add, mapped elsewhere: every tile receives its channels' bias."""
    from ipu_teach.autograd.cost import MatrixProduct
    from ipu_teach.ipu import matrix_plan
    from ipu_teach.ipu.executor import IPUExecutor

    dense = MatrixProduct(rows=16, depth=4096, cols=1024, channels=4096, right_laid_out=True)
    planned, chosen = matrix_plan.choose(dense, hardware.MK2)
    assert planned is not dense and matrix_plan.channel_tiles(dense, planned, chosen) == 1
    # not swapped, not split in depth: a channel's outputs are on the tile of each block of rows
    rows_apart = matrix_plan._price(dense, hardware.MK2, 4, rows_split=4, cols_split=8, depth_split=1)
    assert matrix_plan.channel_tiles(dense, dense, rows_apart) == 4

    def bias_received(host_api):
        pre_compiled_system(hardware.MK2.tiles)
        with ipu.ipu_strategy.IPUStrategy().scope():
            inputs = keras.Input(shape=(4096,))
            model = keras.Model(inputs, keras.layers.Dense(1024)(inputs))
            model.compile("sgd", "mse")
            model.device_executor = IPUExecutor(model, host_api=host_api)
            model.predict(np.zeros((16, 4096), np.float32), batch_size=16, verbose=0)
        graph = model.get_ipu_executable("predict").graph
        return int(next(s for s in graph.steps if s.name.startswith("dense/Add:")).received.sum())

    assert bias_received("keras") == 0
    assert bias_received("poptorch") > 1024 * 4  # each feature's bias to every tile adding it
    # under mixed precision Keras casts the bias to fp16 first, and the fusion takes any 1-D operand: still laid out,
    # over the 2 tiles each feature's outputs now end on (fp16's float partials come 8 to a grain), so a tile
    # receives half the bias it adds
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        fused, plain = bias_received("keras"), bias_received("poptorch")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    assert 0 < fused and 2 * fused == plain


def test_a_channel_s_outputs_end_on_the_tiles_poplin_s_reduction_gives_them():
    """Lay each output of a plan's block out element by element as poplin's last reduction stage does (the block's
    partials channel group first, then position; a run of consecutive grains to each reducing tile) and count the
    tiles one channel's outputs are on: ``channel_tiles`` gives that count, for a plan's columns and, swapped, for its
    rows."""
    from ipu_teach.autograd.cost import MatrixProduct
    from ipu_teach.integers import ceil_div
    from ipu_teach.ipu import matrix_plan

    def laid_out(planned, chosen):
        """The reducing tile of each output of one block, indexed [position, channel]."""
        rows = ceil_div(planned.rows, chosen.rows_split)
        cols = ceil_div(ceil_div(planned.cols, chosen.cols_split), chosen.serial_split)
        groups, width = ceil_div(cols, chosen.output_group), chosen.output_group
        grains = rows * groups
        held = ceil_div(grains, min(chosen.depth_split, grains))
        tile = np.empty((rows, groups * width), np.int64)
        for grain in range(grains):
            group, row = divmod(grain, rows)  # channel group first, then position
            tile[row, group * width : (group + 1) * width] = grain // held
        return tile[:, :cols]

    def counted(product, itemsize=4, **split):
        planned, chosen = (
            matrix_plan.choose(product, hardware.MK2, itemsize)
            if not split
            else (product, matrix_plan._price(product, hardware.MK2, itemsize, **split))
        )
        tile = laid_out(planned, chosen)
        if planned is product:  # a column: its tiles in each block of rows, on average over the columns
            per_channel = [len(np.unique(tile[:, c])) for c in range(tile.shape[1])]
            return chosen.rows_split * ceil_div(sum(per_channel), len(per_channel)), matrix_plan.channel_tiles(
                product, planned, chosen
            )
        return chosen.cols_split * len(np.unique(tile[0])), matrix_plan.channel_tiles(product, planned, chosen)

    dense = MatrixProduct(rows=16, depth=4096, cols=1024, channels=4096, right_laid_out=True)
    assert counted(dense) == (1, 1)  # swapped, fp32: a feature's 16 outputs are one grain, on one tile
    assert counted(dense, itemsize=2) == (2, 2)  # fp16's float partials come 8 to a grain: two grains, two tiles
    conv = MatrixProduct(rows=4 * 14 * 14, depth=9 * 256, cols=256, channels=256, planner="conv", kernel_positions=9)
    for split in (
        {"rows_split": 11, "cols_split": 8, "depth_split": 16},
        {"rows_split": 4, "cols_split": 2, "depth_split": 1},
    ):
        found, formula = counted(conv, **split)
        assert found == formula, split
    wide = MatrixProduct(rows=1536, depth=1024, cols=1024, channels=1024)
    found, formula = counted(wide, rows_split=11, cols_split=16, depth_split=8)
    assert found == formula > 11


def test_messages_follow_how_scattered_the_data_is_not_its_size():
    senders = np.zeros(8, bool)
    senders[:4] = True
    received = np.array([0, 0, 0, 0, 100, 100, 100, 100])
    incoming, outgoing = memory_layout.exchange_messages(received, senders)
    assert incoming.tolist() == [0] * 4 + [1] * 4 and outgoing.tolist() == [1] * 4 + [0] * 4
    scaled = memory_layout.exchange_messages(received * 1000, senders)
    np.testing.assert_array_equal(scaled[0], incoming)
    # all the bytes to one tile: it hears from every sender, who each send it one message
    gathered = memory_layout.exchange_messages(np.array([0, 0, 0, 0, 0, 0, 0, 400]), senders)
    assert gathered[0].tolist() == [0] * 7 + [4] and gathered[1].tolist() == [1] * 4 + [0] * 4
    # one tile's 3 pieces heard by 7 tiles: sent once each (receiver-selected), not once per receiver
    one = np.zeros(8, bool)
    one[0] = True
    heard = np.array([0] + [3] * 7)
    broadcast = memory_layout.exchange_messages(np.array([0] + [384] * 7), one, heard)
    assert broadcast[0].tolist() == heard.tolist() and broadcast[1].tolist() == [3] + [0] * 7


def test_a_product_s_rearrangement_and_reduction_messages_follow_its_plan():
    from ipu_teach.autograd.cost import MatrixProduct
    from ipu_teach.ipu import matrix_plan

    product = MatrixProduct(rows=512, depth=512, cols=512, channels=512)

    def messages(rows_split, cols_split):
        chosen = matrix_plan._price(product, hardware.MK2, 4, rows_split, cols_split, depth_split=1)
        return matrix_plan.transform_messages(product, chosen)

    # a tile hears from the tiles sharing its input slice (the columns' split) and its weights (the rows')
    assert messages(1, 1) == 2 and messages(4, 1) == 1 + 4 and messages(4, 8) == 8 + 4
    assert messages(64, 64) > messages(16, 16) > messages(4, 4)
    # poplin reduces many partials in stages to receive fewer messages (ConvReducePlan.cpp), a tile hearing from
    # each tile of a partial row but its own (its single-input ReduceAdd reads that row in place)
    deep = MatrixProduct(rows=16, depth=8 * 256, cols=16, channels=8 * 256)

    def reduce_messages(depth_split):
        return [stage.messages for stage in matrix_plan._price(deep, hardware.MK2, 4, 1, 1, depth_split).reduce_stages]

    assert reduce_messages(15) == [14] and reduce_messages(16) == [3, 3]
    assert sum(reduce_messages(125)) == 3 * 4 < sum(reduce_messages(124))
    lowered = compile_chain("train", layers=1, batch=512, tiles=64).graph
    transforms = [s for s in lowered.steps if s.name.endswith("/transform")]
    assert transforms and all(s.messages is not None and (s.messages[s.received > 0] > 0).all() for s in transforms)


def test_control_code_is_a_sync_per_step_on_every_tile_and_a_call_per_compute_set_it_runs():
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=8)
    steps = [step_on("a/Op:0", computing=[0, 1]), step_on("b/Op:1", computing=[1])]
    (control,) = [m.per_tile for m in memory_layout.code_memory(steps, spec) if m.category == "control code"]
    sync, call = c.control_instructions_per_step * c.instruction_bytes, c.control_instructions_per_compute_set * 4
    assert (
        control.tolist()
        == [c.control_code_bytes + 2 * sync + call, c.control_code_bytes + 2 * sync + 2 * call]
        + [c.control_code_bytes + 2 * sync] * 6
    )
    # a step more: every tile one sync more, working in it or not
    (longer,) = [
        m.per_tile
        for m in memory_layout.code_memory(steps + [step_on("c/Op:2", receiving=[3])], spec)
        if m.category == "control code"
    ]
    np.testing.assert_array_equal(longer - control, np.full(8, sync))


def test_host_exchange_code_sits_on_the_tiles_each_host_stream_s_data_is_mapped_to():
    c = hardware.CODE
    one, three = (compile_chain("train", layers=layers, batch=64, tiles=16).graph for layers in (1, 3))

    def streams_on_each_tile(graph):
        (item,) = [m.per_tile for m in graph.memory if m.category == "host exchange code"]
        assert ((item - c.host_exchange_code_bytes) % c.host_exchange_code_bytes_per_stream == 0).all()
        return ((item - c.host_exchange_code_bytes) // c.host_exchange_code_bytes_per_stream).tolist()

    # every tile: the 64 x 64 kernel's load and read-back and the inputs' and labels' streams (16 KiB each, on
    # all 16 tiles); the bias (256 B) on tiles 0 and 1 adds its two, the loss result (4 B) one on tile 0
    assert streams_on_each_tile(one) == [4 + 2 + 1, 4 + 2] + [4] * 14
    # two more Dense layers: two more kernels on every tile, and their biases on tiles 2-3 and 4-5
    assert streams_on_each_tile(three) == [8 + 2 + 1, 8 + 2, 8 + 2, 8 + 2, 8 + 2, 8 + 2] + [8] * 10


def test_host_streams_count_each_variable_twice_and_each_data_stream_once_where_they_are_mapped():
    spec = replace(hardware.MK2, tiles=4)
    memory = [
        memory_layout.MemoryItem("w", "variables", np.array([128, 128, 0, 0])),
        memory_layout.MemoryItem("w/slot0", "optimizer state", np.array([0, 0, 0, 8])),
        memory_layout.MemoryItem("a", "activations", np.array([64, 64, 64, 64]), live=(0, 1)),  # never streamed
    ]
    # 300 bytes of input: 128 B at least on each tile a linear mapping uses, so tiles 0-2
    streams = memory_layout.host_streams(memory, spec, [300])
    assert streams.tolist() == [3, 3, 1, 2]
    (code,) = [m.per_tile for m in memory_layout.code_memory([], spec, streams) if m.category == "host exchange code"]
    c = hardware.CODE
    assert code.tolist() == [c.host_exchange_code_bytes + n * c.host_exchange_code_bytes_per_stream for n in streams]
    # a program without host streams still holds the host sync's code on every tile
    (bare,) = [m.per_tile for m in memory_layout.code_memory([], spec) if m.category == "host exchange code"]
    assert bare.tolist() == [c.host_exchange_code_bytes] * 4


def test_vertex_code_is_per_codelet_so_more_identical_layers_add_none():
    shallow, deep = (compile_chain("predict", layers=layers, batch=64, tiles=16).graph for layers in (2, 6))
    code = {}
    for name, graph in (("shallow", shallow), ("deep", deep)):
        code[name] = {m.category: m.per_tile for m in graph.memory if m.category in hardware.CODE_CATEGORIES}
    np.testing.assert_array_equal(code["shallow"]["vertex code"], code["deep"]["vertex code"])
    codelets = {memory_layout.codelet_of(s) for s in deep.steps if s.cycles.any()}  # a transform runs none
    assert {"MatMul", "add", "relu"} <= codelets <= {"MatMul", "reduce_add", "add", "relu"}  # Add, ReLU: popops passes
    c = hardware.CODE
    assert code["deep"]["vertex code"].max() == c.vertex_code_bytes + len(codelets) * c.vertex_code_bytes_per_codelet
    # control code still grows with the program's steps, a sync per step on every tile
    extra_steps = len(deep.steps) - len(shallow.steps)
    assert extra_steps > 0
    extra = code["deep"]["control code"] - code["shallow"]["control code"]
    assert extra.min() >= extra_steps * c.control_instructions_per_step * c.instruction_bytes


def test_the_codelet_of_a_step_names_its_op_and_part_without_instance_numbers():
    step = lambda name, phase="forward": bsp_step(name, phase)  # noqa: E731
    assert memory_layout.codelet_of(step("conv2d/Conv2D:0")) == "Conv2D"
    assert memory_layout.codelet_of(step("conv2d_1/Conv2D:3/grad/product1", "backward")) == "Conv2D/grad/product"
    assert memory_layout.codelet_of(step("conv2d_1/Conv2D:3/serial2")) == "Conv2D"
    assert (
        memory_layout.codelet_of(step("dense/MatMul:7/grad/reduce", "backward")) == "reduce_add"
    )  # poplin's ReduceAdd, not popops' Reduce
    assert memory_layout.codelet_of(step("dense/kernel/update", "update")) == "update"
    # the parts every op shares run one vertex type, named by it: reductions' stages, transposes, popops passes
    assert memory_layout.codelet_of(step("batch_normalization/BatchNorm:5/grad/reduction", "backward")) == "reduce"
    assert memory_layout.codelet_of(step("dense_1/Softmax:12/reduction/stage1")) == "reduce"
    assert memory_layout.codelet_of(step("conv2d/Conv2D:0/grad/product1/transform", "backward")) == "transpose"
    assert memory_layout.codelet_of(step("dense_1/Softmax:12/exp")) == "exp"
    assert memory_layout.codelet_of(step("conv2d/Conv2D:0/add2")) == "add"
    # an op's own element-wise pass runs its popops codelet, the vertex another op's pass of that codelet runs
    assert memory_layout.codelet_of(replace(step("dense/Add:8"), codelet="add")) == "add"
    assert memory_layout.codelet_of(replace(step("dense/ReLU:9"), codelet="relu")) == "relu"


def test_vertex_code_holds_a_shared_vertex_once_on_a_tile_whichever_ops_run_it():
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=4)
    steps = [
        step_on("a/Softmax:0/add", computing=[0, 1], tiles=4),
        step_on("b/BatchNorm:1/add2", computing=[1, 2], tiles=4),  # the same popops ADD vertex: loaded once on tile 1
        step_on("b/BatchNorm:1/grad/reduction/stage1", computing=[1], tiles=4),
        step_on("c/BatchNorm:2/reduction/stage2", computing=[1], tiles=4),  # every stage runs popops' Reduce
        step_on("d/MatMul:3/reduce1", computing=[1, 2], tiles=4),  # a product's partials: poplin's ReduceAdd
        step_on("e/MatMul:4/reduce", computing=[2], tiles=4),
    ]
    (vertex,) = [m.per_tile for m in memory_layout.code_memory(steps, spec) if m.category == "vertex code"]
    one, two, three = (c.vertex_code_bytes + n * c.vertex_code_bytes_per_codelet for n in (1, 2, 3))
    assert vertex.tolist() == [one, three, two, 0]


def test_vertex_state_is_one_multivertex_a_tile_for_an_element_wise_pass_and_two_for_other_compute_sets():
    """popops puts one 1D MultiVertex on each tile of an element-wise op whose output there is one contiguous
    region (lib/popops/ElementWise.cpp); a product or a reduction holds more vertices a tile."""
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=4)
    add = replace(step_on("a/Softmax:0/add", computing=[0, 1], tiles=4), codelet="add")
    update = replace(step_on("a/kernel/SGD1VarUpdate", computing=[1], tiles=4), codelet="scaled_add")
    product = step_on("b/MatMul:1", computing=[1, 2], tiles=4)
    (state,) = [
        m.per_tile
        for m in memory_layout.code_memory([add, update, product], spec)
        if m.category == "vertex instance state"
    ]
    one = c.vertices_per_elementwise_compute_set * c.vertex_state_bytes
    other = c.vertices_per_compute_set * c.vertex_state_bytes
    assert (c.vertices_per_elementwise_compute_set, c.vertices_per_compute_set) == (1, 2)
    assert state.tolist() == [one, 2 * one + other, other, 0]


def bsp_step(name, phase):
    from ipu_teach.ipu.lowering import LoweredStep

    return LoweredStep(name, phase, 0, np.zeros(1, np.int64), np.zeros(1, np.int64))


def test_tensors_are_mapped_as_poputil_maps_them_linearly_by_default():
    # grains of one 64-bit vector and at least 128 bytes on each tile used, from tile 0
    assert memory_layout.mapped_bytes(10, 4, 1472)[:2].tolist() == [40, 0]
    fp32 = memory_layout.mapped_bytes(1000, 4, 1472)
    assert fp32[:31].tolist() == [128] * 31 and fp32[31] == 1000 * 4 - 31 * 128 and not fp32[32:].any()
    fp16 = memory_layout.mapped_bytes(1000, 2, 1472)
    assert fp16[:15].tolist() == [128] * 15 and fp16[15] == 1000 * 2 - 15 * 128 and not fp16[16:].any()
    large = memory_layout.mapped_bytes(1472 * 100, 4, 1472)
    assert large.tolist() == [400] * 1472  # a large tensor spreads evenly
    graph = compile_chain("predict", layers=1, batch=64, tiles=16).graph
    (bias,) = [m.per_tile for m in graph.memory if m.name.startswith("dense/bias")]
    assert sorted(bias[bias > 0].tolist()) == [128, 128]  # 64 fp32 biases: two tiles of the 128-byte minimum


def test_training_holds_each_gradient_from_the_backward_step_that_makes_it_to_the_one_that_reads_it():
    graph = compile_chain("train", layers=2, batch=64, tiles=16).graph
    names = [s.name for s in graph.steps]
    gradients = {m.name: m for m in graph.memory if m.category == "gradients"}
    assert all(not m.always_live and m.popvision_category == "not-always-live variables" for m in gradients.values())
    # the gradient of dense's ReLU output: made by dense_1's MatMul backward, read by the ReLU's backward
    relu = gradients["dense/ReLU:2/output/grad"]
    assert names[relu.live_from].startswith("dense_1/MatMul:3/grad")
    assert names[relu.live_until].startswith("dense/ReLU:2/grad")
    assert relu.live_from < relu.live_until and relu.per_tile.sum() == 64 * WIDTH * 4
    # the program's last op (the loss) has no gradient tensor of its own output; every other op has one
    assert len(gradients) == len([n for n in names if n.endswith("/grad")]) - 1


def test_the_out_of_memory_breakdown_is_what_the_tile_holds_at_its_peak():
    graph = compile_chain("predict", layers=8, batch=2048, tiles=4).graph
    tile = int(np.argmax(graph.tile_memory()))
    categories, variables = out_of_memory.breakdown(graph, tile)
    assert sum(n for _, n in categories) == sum(n for _, n in variables) == graph.tile_memory()[tile]
    live_activations = [name for name, _ in variables if name.endswith("/output")]
    assert 0 < len(live_activations) < 8 * 3  # only those live at the peak, not every activation of the program
    assert [n for _, n in categories] == sorted((n for _, n in categories), reverse=True)


def test_in_inference_a_skip_connection_keeps_its_tensor_until_the_layer_that_reads_it():
    pre_compiled_system(16)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(WIDTH,))
        skip = keras.layers.Dense(WIDTH, activation="relu", name="skip")(inputs)
        x = keras.layers.Dense(WIDTH, activation="relu", name="inner")(skip)
        x = keras.layers.Dense(WIDTH, activation="relu", name="deeper")(x)
        model = keras.Model(inputs, keras.layers.Add(name="join")([skip, x]))
        model.compile("sgd", "mse")
        model.predict(np.zeros((64, WIDTH), np.float32), batch_size=64, verbose=0)
    graph = model.get_ipu_executable("predict").graph
    names = [s.name for s in graph.steps]
    outputs = {m.name.rsplit(":", 1)[0]: m for m in graph.memory if m.category == "activations"}
    assert names[outputs["skip/ReLU"].live_until].startswith("join/")  # read again by the Add, three layers on
    assert names[outputs["skip/MatMul"].live_until].startswith("skip/Add")  # inside a layer: the next op reads it
    assert names[outputs["inner/ReLU"].live_until].startswith("deeper/MatMul")


def test_a_product_s_operand_pieces_follow_poplin_s_least_bytes_a_tile_and_are_each_sent_once():
    from ipu_teach.autograd.cost import MatrixProduct
    from ipu_teach.ipu import matrix_plan

    def plan(product, rows_split, cols_split):
        return matrix_plan._price(product, hardware.MK2, 4, rows_split, cols_split, depth_split=1)

    # weights in pieces of whole grains of 8 input x 16 output channels (mapWeights' grainSize: 512 bytes in fp32,
    # above its least 256 bytes a tile): a 4 KiB slice shared by 64 tiles comes from 8
    matmul = MatrixProduct(rows=4096, depth=64, cols=16, channels=64)
    assert matrix_plan.transform_messages(matmul, plan(matmul, 64, 1)) == 1 + 8
    # a convolution's input slice is its positions times its input channels, not times its 9 kernel positions:
    # 64 x 64 floats in 128-byte pieces from 128 of the 256 tiles sharing it
    conv = MatrixProduct(rows=64, depth=9 * 64, cols=4096, channels=64, planner="conv")
    assert matrix_plan.transform_messages(conv, plan(conv, 1, 256)) == 128 + 1
    # each piece is sent once, heard by every tile sharing it: a tile sends one piece of each operand at most
    assert matrix_plan.transform_sends(conv, plan(conv, 1, 256)) == 1 + 1
    lowered = compile_chain("train", layers=1, batch=512, tiles=64).graph
    transforms = [s for s in lowered.steps if s.name.endswith("/transform")]
    assert transforms and all(s.sends is not None and s.sends.max() <= 2 for s in transforms)
    assert any(s.messages.max() > s.sends.max() for s in transforms)  # heard from more tiles than it sends to


def test_an_exchange_bringing_every_tile_one_message_costs_what_poplar_s_report_shows():
    # Graphcore's TF docs' Mk1 report: 60,792 B of internal exchange code over 1,216 tiles (50 B a tile) for a
    # program whose one exchange on every tile brings it the seed its SetSeed vertex reads, from one tile
    c, spec = hardware.CODE, replace(hardware.MK2, tiles=1216)
    made = step_on("seed/Op:0", computing=[0], tiles=1216)
    code = memory_layout.exchange_code([made, step_on("set_seed/Op:1", range(1216), range(1216), 1216)], spec)
    assert code[1:].tolist() == [code[1]] * 1215 and 45 <= code[1] <= 55
    assert code[1] == (c.exchange_instructions_per_exchange + c.exchange_instructions_per_message_received) * 4


def test_identical_products_and_norms_share_one_compiled_function_s_code():
    from ipu_teach.ipu.lowering import OUTLINED_OPS

    assert set(OUTLINED_OPS) == {"BatchNorm", "LayerNorm", "GroupNorm"}  # and every op with a matrix product
    a, b, c, plain, looped = (
        bsp_step(name, "forward") for name in ("x/Conv2D:0", "y/Conv2D:1", "z/Conv2D:2", "r", "l")
    )
    a.outlined, b.outlined, c.outlined = ("conv 3x3", 0), ("conv 3x3", 0), ("conv 1x1", 0)
    looped.compiled_earlier = True
    assert memory_layout.compiled_steps([a, b, c, plain, looped]) == [a, c, plain]
    # four identical Dense layers: the later three call the first's function; the first layer's backward (it
    # has no input gradient to make) is its own
    shallow, deep = (compile_chain("train", layers=layers, batch=64, tiles=16).graph for layers in (2, 4))
    products = lambda graph: [s for s in memory_layout.compiled_steps(graph.steps) if "MatMul" in s.name]  # noqa: E731
    assert len(products(deep)) == len(products(shallow)) < len([s for s in deep.steps if "MatMul" in s.name]) / 2
    assert all(s.outlined is not None for s in deep.steps if "MatMul" in s.name)
    assert all(s.outlined is None for s in deep.steps if "/ReLU" in s.name)  # element-wise ops are not outlined
    (deep_exchange, shallow_exchange) = (
        next(m.per_tile for m in graph.memory if m.category == "internal exchange code") for graph in (deep, shallow)
    )
    assert deep_exchange.sum() < 1.5 * shallow_exchange.sum()  # not twice: the products' exchanges are shared


def test_a_gradient_passed_through_an_add_lives_from_where_the_backward_makes_it():
    """An Add has no backward compute set: the gradient of what it adds is its own output's gradient, made by
    the backward of the layer after it, late in the backward pass; not live from the Add's forward step."""
    pre_compiled_system(16)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(WIDTH,))
        skip = keras.layers.Dense(WIDTH, activation="relu", name="skip")(inputs)
        x = keras.layers.Dense(WIDTH, activation="relu", name="inner")(skip)
        x = keras.layers.Add(name="join")([skip, x])
        model = keras.Model(inputs, keras.layers.Dense(WIDTH, name="head")(x))
        model.compile("sgd", "mse")
        data = np.zeros((64, WIDTH), np.float32)
        model.fit(data, data, batch_size=64, verbose=0)
    graph = model.get_ipu_executable("train").graph
    names = [s.name for s in graph.steps]
    assert not any(name.startswith("join/") and name.endswith("/grad") for name in names)  # no backward compute
    gradients = {m.name: m for m in graph.memory if m.category == "gradients"}
    relu = next(m for name, m in gradients.items() if name.startswith("inner/ReLU"))
    assert names[relu.live_from] == next(n for n in names if n.startswith("head/MatMul") and "/grad" in n)
    assert names[relu.live_until].startswith("inner/ReLU") and names[relu.live_until].endswith("/grad")
    assert relu.live_from > names.index(next(n for n in names if n.startswith("join/")))  # not from the forward
