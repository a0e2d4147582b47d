"""The Poplar-like API: exact numerics, costed exchange, balanced vs imbalanced mappings, every error."""

import numpy as np
import pytest

from ipu_teach.bsp import poplar
from ipu_teach.bsp.poplar import GraphError, TileOutOfMemoryError, codelet


@codelet(inputs={"row": "n", "vec": "n"}, outputs={"out": ""})
def dot(row, vec):
    return (row * vec).sum(axis=-1)


@codelet(inouts={"x": None}, cycles=12)
def add_one(x):
    return x + 1


def graph_of(tiles=4, ipus=1):
    return poplar.Graph(poplar.IPUModel(tiles_per_ipu=tiles, num_ipus=ipus).create_device())


def matrix_vector(rows, cols, tiles, dtype="float32", vector_tile=0):
    """Tutorial 5: one dot-product vertex per row, on the tile holding that row."""
    graph = graph_of(tiles)
    A = graph.add_variable(dtype, (rows, cols), "A")
    x = graph.add_variable(dtype, (cols,), "x")
    y = graph.add_variable(dtype, (rows,), "y")
    graph.map_tensor_linearly(A, grain=cols)
    graph.map_tensor_linearly(y)
    graph.set_tile_mapping(x, vector_tile)
    compute_set = graph.add_compute_set("mv")
    for i in range(rows):
        tile = int(graph.tile_of(y[i]))
        graph.add_vertex(compute_set, dot, {"row": A[i], "vec": x, "out": y[i]}, tile=tile)
    return graph, (A, x, y), poplar.Execute(compute_set)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_matrix_vector_over_tiles_equals_numpy(dtype):
    rows, cols = 12, 7
    graph, (A, x, y), program = matrix_vector(rows, cols, tiles=4, dtype=dtype)
    rng = np.random.default_rng(0)
    a, v = (
        (rng.integers(-9, 9, (rows, cols)), rng.integers(-9, 9, cols))
        if dtype == "int32"
        else (rng.standard_normal((rows, cols)).astype(dtype), rng.standard_normal(cols).astype(dtype))
    )
    engine = poplar.Engine(graph, program)
    engine.write_tensor(A, a)
    engine.write_tensor(x, v)
    engine.run()
    result = engine.read_tensor(y)
    np.testing.assert_array_equal(result, (a * v).sum(axis=-1).astype(dtype))
    if dtype == "int32":
        np.testing.assert_array_equal(result, a @ v)
    else:
        np.testing.assert_allclose(result, a @ v, rtol=1e-5)


def test_remote_inputs_are_exchanged_once_per_tile_and_costed():
    rows, cols, tiles = 12, 7, 4
    graph, _, program = matrix_vector(rows, cols, tiles)
    timeline = poplar.Engine(graph, program).run()
    spec = graph.device.spec
    # x lives on tile 0 and every other tile needs it: tile 0 puts it on the exchange once (receiver-selected,
    # a broadcast), and each receiver takes its copy; the busiest tile moves cols * 4 bytes either way
    assert timeline.exchange[0, 0] == -(-cols * 4 // spec.exchange_bytes_per_cycle)
    # 3 rows per tile, each vertex on its own thread: default estimate = overhead + elements touched
    assert timeline.compute[0, 0] == (10 + cols + cols + 1) * spec.threads_per_tile  # barrel-scheduled workers
    assert timeline.sync[0, 0] == spec.sync_cycles_on_chip


def test_balanced_mapping_beats_imbalanced_by_the_predicted_factor():
    def compute_cycles(spread):
        graph = graph_of(tiles=16)
        data = graph.add_variable("float32", (96, 4), "data")
        if spread:
            graph.map_tensor_linearly(data, grain=4)
        else:
            graph.set_tile_mapping(data, 0)
        compute_set = graph.add_compute_set("work")
        tiles = graph.tile_of(data)[:, 0]
        for i in range(96):
            vertex = graph.add_vertex(compute_set, add_one, {"x": data[i]}, tile=int(tiles[i]))
            graph.set_perf_estimate(vertex, 100)
        return poplar.Engine(graph, poplar.Execute(compute_set)).run().totals()["compute"]

    balanced, imbalanced = compute_cycles(True), compute_cycles(False)
    # balanced: 6 vertices per tile, one per thread -> 100 cycles; all on tile 0: 96 / 6 threads -> 1600 cycles
    assert (balanced, imbalanced) == (600, 9_600)  # 1 and 16 rounds of 100 instructions, 6 cycles each
    assert imbalanced / balanced == 16


def test_repeat_runs_the_codelet_each_time_and_counts_the_cost():
    graph = graph_of(tiles=2)
    counter = graph.add_variable("int32", (2, 3), "counter")
    graph.map_tensor_linearly(counter, grain=3)
    compute_set = graph.add_compute_set("inc")
    for tile in range(2):
        graph.add_vertex(compute_set, add_one, {"x": counter[tile]}, tile=tile)
    engine = poplar.Engine(graph, poplar.Repeat(5, poplar.Execute(compute_set)))
    timeline = engine.run()
    np.testing.assert_array_equal(engine.read_tensor(counter), np.full((2, 3), 5))
    assert timeline.counts.tolist() == [5] and timeline.compute[0, 0] == 12 * 6
    assert timeline.total_cycles() == 5 * (12 * 6 + graph.device.spec.sync_cycles_on_chip)


def test_vertices_read_before_any_writes_in_a_superstep():
    @codelet(inputs={"left": ""}, outputs={"out": ""})
    def copy_left(left):
        return left

    graph = graph_of(tiles=3)
    a = graph.add_constant("int32", (3,), [1, 2, 3], "a")
    graph.map_tensor_linearly(a)
    compute_set = graph.add_compute_set("shift")
    for i in range(3):
        graph.add_vertex(compute_set, copy_left, {"left": a[(i - 1) % 3], "out": a[i]}, tile=i)
    engine = poplar.Engine(graph, poplar.Execute(compute_set))
    engine.run()
    np.testing.assert_array_equal(engine.read_tensor(a), [3, 1, 2])


def test_copies_and_host_streams_move_data_and_are_costed():
    graph = graph_of(tiles=4, ipus=2)
    src = graph.add_variable("float32", (8,), "src")
    dst = graph.add_variable("float32", (8,), "dst")
    graph.map_tensor_linearly(src)
    graph.set_tile_mapping(dst, 5)
    inbound = graph.add_host_to_device_fifo("in", "float32", 8)
    outbound = graph.add_device_to_host_fifo("out", "float32", 8)
    program = poplar.Sequence(poplar.Copy(inbound, src), poplar.Copy(src, dst), poplar.Copy(dst, outbound))
    engine = poplar.Engine(graph, program)
    host_in = np.arange(16, dtype=np.float32)
    host_out = np.zeros(16, dtype=np.float32)
    engine.connect_stream("in", host_in)
    engine.connect_stream("out", host_out)
    engine.run()
    timeline = engine.run()
    np.testing.assert_array_equal(engine.read_tensor(dst), host_in[8:])
    np.testing.assert_array_equal(host_out, host_in)
    assert timeline.kinds == ("host->device", "exchange", "device->host")
    assert timeline.ipus == 2
    assert timeline.exchange[1].max() == -(-7 * 4 // 4)  # tile 5 receives 7 floats (one is already there)


def test_runs_are_deterministic_and_mapping_is_reported():
    timelines = [poplar.Engine(*matrix_vector(10, 5, 4)[::2]).run() for _ in range(2)]
    assert timelines[0].records() == timelines[1].records()
    graph, (A, x, y), _ = matrix_vector(10, 5, 4)
    assert graph.get_tile_mapping(A) == [(0, 0, 15), (1, 15, 30), (2, 30, 45), (3, 45, 50)]
    assert graph.bytes_per_tile().sum() == (50 + 5 + 10) * 4
    assert set(graph.memory_by_tensor()) == {"A", "x", "y"}


def test_out_of_memory_names_tile_bytes_and_largest_tensors_and_keeps_the_old_mapping():
    graph = graph_of(tiles=2)
    sram = graph.device.spec.sram_per_tile
    weights = graph.add_variable("float32", (sram // 8,), "weights")
    graph.set_tile_mapping(weights, 1)
    big = graph.add_variable("float32", (sram // 4,), "activations")
    graph.map_tensor_linearly(big)
    before = graph.bytes_per_tile().copy()
    with pytest.raises(TileOutOfMemoryError) as caught:
        graph.set_tile_mapping(big, 1)
    message = str(caught.value)
    assert f"tile 1: {sram // 4 * 4 + sram // 2:,} bytes needed but only {sram:,} bytes" in message
    assert f"activations ({sram:,} B), weights ({sram // 2:,} B)" in message
    np.testing.assert_array_equal(graph.bytes_per_tile(), before)


def unconnected_graph():
    graph = graph_of()
    t = graph.add_variable("float32", (4,), "t")
    graph.set_tile_mapping(t, 0)
    return graph, t


def build_and_run(build):
    graph, t = unconnected_graph()
    program = build(graph, t)
    poplar.Engine(graph, program)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda g, t: g.set_tile_mapping(t, 4), r"tensor 't': tile 4 is out of range; this device has tiles 0\.\.3"),
        (lambda g, t: g.set_tile_mapping(t[1:], -1), r"tile -1 is out of range"),
        (
            lambda g, t: g.add_vertex(g.add_compute_set("c"), add_one, {"x": t}, tile=9),
            r"vertex 0 \(add_one\) of compute set 'c': tile 9 is out of range",
        ),
        (
            lambda g, t: (g.add_variable("float32", (3,), "loose"), poplar.Execute(g.add_compute_set("c")))[1],
            r"tensor 'loose' has 3 of 3 elements not mapped to any tile",
        ),
        (
            lambda g, t: poplar.Execute(_vertex_cs(g, dot, {"row": t, "out": t[0]})),
            r"vertex 0 \(dot\) of compute set 'cs': field\(s\) \['vec'\] are not connected",
        ),
        (
            lambda g, t: _vertex_cs(g, dot, {"row": t, "vec": t[:3]}),
            r"mismatched shapes: field 'vec' has n=3 \(shape \(3,\)\) but field 'row' has n=4",
        ),
        (lambda g, t: _vertex_cs(g, dot, {"row": t[0]}), r"field 'row' of codelet 'dot' needs 1 dimension\(s\) \(n\)"),
        (lambda g, t: _vertex_cs(g, dot, {"rows": t}), r"codelet 'dot' has no field 'rows'; its fields are"),
        (
            lambda g, t: poplar.Execute(_vertex_cs(g, add_one, {"x": t}, tile=None)),
            r"vertex 0 \(add_one\).* has no tile",
        ),
        (
            lambda g, t: poplar.Execute(_vertex_cs(g, add_one, {"x": t}, tile=2)),
            r"runs on tile 2 but writes 'x' to tensor 't' held on tile 0; a vertex only writes its own tile",
        ),
        (lambda g, t: poplar.Execute(_two_writers(g, t)), r"several vertices write the same elements of tensor 't'"),
        (
            lambda g, t: poplar.Copy(t, t[:2]),
            r"Copy from 't' to 't\[view \(2,\)\]': mismatched shapes \(4,\) and \(2,\)",
        ),
        (lambda g, t: poplar.Copy(g.add_host_to_device_fifo("in", "float32", 3), t), r"mismatched shapes"),
        (lambda g, t: poplar.Copy(t, g.add_host_to_device_fifo("in", "float32", 4)), r"stream 'in' goes host->device"),
        (lambda g, t: t[7], r"tensor 't' with shape \(4,\): index 7 is invalid"),
        (lambda g, t: g.add_variable("int32", (2,), "t"), r"a tensor named 't' already exists"),
        (lambda g, t: poplar.Execute("cs"), r"Execute needs a compute set"),
    ],
)
def test_bad_graphs_fail_when_built_or_when_the_engine_is_created(build, message):
    with pytest.raises(GraphError, match=message):
        build_and_run(build)


def _vertex_cs(graph, the_codelet, connections, tile=0):
    compute_set = graph.add_compute_set("cs")
    graph.add_vertex(compute_set, the_codelet, connections, tile=tile)
    return compute_set


def _two_writers(graph, t):
    compute_set = graph.add_compute_set("cs")
    for _ in range(2):
        graph.add_vertex(compute_set, add_one, {"x": t}, tile=0)
    return compute_set


@pytest.mark.parametrize(
    "tiles, ipus, message",
    [
        (0, 1, r"IPUModel: tiles_per_ipu must be a positive integer, got 0"),
        (-4, 1, r"IPUModel: tiles_per_ipu must be a positive integer, got -4"),
        (4, 0, r"IPUModel: num_ipus must be a positive integer, got 0"),
    ],
)
def test_zero_or_negative_tile_counts_are_refused(tiles, ipus, message):
    with pytest.raises(GraphError, match=message):
        poplar.IPUModel(tiles_per_ipu=tiles, num_ipus=ipus)


def test_runtime_errors_name_the_codelet_or_stream():
    @codelet(inputs={"a": "n"}, outputs={"b": "n"})
    def wrong_shape(a):
        return a.sum()[None, None, None]

    graph, t = unconnected_graph()
    out = graph.add_variable("float32", (4,), "out")
    graph.set_tile_mapping(out, 0)
    engine = poplar.Engine(graph, poplar.Execute(_vertex_cs(graph, wrong_shape, {"a": t, "b": out})))
    with pytest.raises(
        GraphError, match=r"codelet 'wrong_shape': field 'b' returned shape \(1, 1, 1\), expected \(1, 4\)"
    ):
        engine.run()
    stream = graph.add_host_to_device_fifo("feed", "float32", 4)
    engine = poplar.Engine(graph, poplar.Copy(stream, t))
    with pytest.raises(GraphError, match=r"stream 'feed' has no host buffer; call engine.connect_stream"):
        engine.run()
    with pytest.raises(GraphError, match=r"stream 'feed': the buffer must be a numpy array holding a whole number"):
        engine.connect_stream("feed", np.zeros(6, np.float32))
    with pytest.raises(GraphError, match=r"write_tensor\('t'\): values of shape \(3,\) do not fit"):
        engine.write_tensor(t, [1, 2, 3])
    with pytest.raises(GraphError, match=r"Engine.run: program 1 does not exist"):
        engine.run(1)


def test_a_loop_too_long_to_compute_is_refused_and_an_empty_one_costs_nothing():
    """Repeat(10**15, Sequence()) hung run(), which counted out every empty iteration; a real 10**7-step loop
    would compute numpy values for hours: it is refused before anything changes."""
    import subprocess
    import sys

    from ipu_teach.examples import add_one_graph

    graph, v, compute_set = add_one_graph()
    engine = poplar.Engine(graph, [poplar.Repeat(10**7, poplar.Execute(compute_set)), poplar.Execute(compute_set)])
    with pytest.raises(GraphError, match=r"program 0 runs 10,000,000 supersteps.* more than 1,000,000 would not"):
        engine.run(0)
    engine.run(1)
    np.testing.assert_array_equal(engine.read_tensor(v), [1, 1, 1, 1])  # the refused loop changed nothing
    code = """
from ipu_teach.bsp import poplar
from ipu_teach.examples import add_one_graph
graph, v, compute_set = add_one_graph()
never = poplar.Repeat(0, poplar.Execute(compute_set))
empty = poplar.Sequence(poplar.Repeat(10**15, poplar.Sequence()), poplar.Repeat(10**15, never))
engine = poplar.Engine(graph, poplar.Sequence(empty, poplar.Execute(compute_set)))
print(engine.run().supersteps, engine.read_tensor(v).tolist())
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "1 [1.0, 1.0, 1.0, 1.0]\n"
