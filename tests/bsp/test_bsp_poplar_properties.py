"""Property tests of the Poplar-like graph: memory accounting and exchange against brute force."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ipu_teach.bsp import poplar

TILES = 5


@poplar.codelet(inputs={"a": None}, outputs={"out": ""})
def total(a):
    return a.reshape(a.shape[0], -1).sum(axis=1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, TILES - 1), min_size=1, max_size=40), st.sampled_from(["int8", "float32", "float64"]))
def test_bytes_per_tile_sum_to_the_tensor_size_for_any_mapping(tiles, dtype):
    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=TILES).create_device())
    tensor = graph.add_variable(dtype, (len(tiles),), "t")
    for i, tile in enumerate(tiles):
        graph.set_tile_mapping(tensor[i], tile)
    per_tile = graph.bytes_per_tile()
    assert per_tile.sum() == tensor.nbytes
    np.testing.assert_array_equal(per_tile, np.bincount(tiles, minlength=TILES) * np.dtype(dtype).itemsize)
    assert graph.tile_of(tensor).tolist() == tiles


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, TILES - 1), min_size=6, max_size=6),
    st.lists(st.tuples(st.integers(0, TILES - 1), st.integers(0, 5), st.integers(1, 6)), min_size=1, max_size=8),
)
def test_exchange_matches_a_brute_force_count(element_tiles, vertices):
    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=TILES).create_device())
    data = graph.add_variable("float32", (6,), "data")
    results = graph.add_variable("float32", (len(vertices),), "results")
    for i, tile in enumerate(element_tiles):
        graph.set_tile_mapping(data[i], tile)
    compute_set = graph.add_compute_set("sums")
    received, sent = np.zeros(TILES, int), np.zeros(TILES, int)
    needed = set()
    for i, (tile, start, length) in enumerate(vertices):
        graph.set_tile_mapping(results[i], tile)
        graph.add_vertex(compute_set, total, {"a": data[start : start + length], "out": results[i]}, tile=tile)
        needed |= {(tile, e) for e in range(start, min(start + length, 6)) if element_tiles[e] != tile}
    for tile, _element in needed:
        received[tile] += 4
    for element in {element for _, element in needed}:  # receiver-selected: each value is sent once
        sent[element_tiles[element]] += 4
    engine = poplar.Engine(graph, poplar.Execute(compute_set))
    values = np.arange(6, dtype=np.float32)
    engine.write_tensor(data, values)
    timeline = engine.run()
    assert timeline.exchange[0, 0] == -(-max(received.max(), sent.max()) // 4)
    expected = [values[start : start + length].sum() for _, start, length in vertices]
    np.testing.assert_array_equal(engine.read_tensor(results), expected)
