# Exercise 3 (solution): y = a * x + y (axpy) with one vertex per tile; `a` is a constant on tile 0,
# so every other tile receives its 4 bytes by exchange before computing: one broadcast of 4 bytes, 1 cycle.
# (The names here are the solution's own, so the notebook's `graph`, `x`, `y`... are left as they were.)
import numpy as np

from ipu_teach.bsp import poplar


@poplar.codelet(inputs={"a": "", "x": "n"}, inouts={"y": "n"})
def axpy(a, x, y):
    return a[:, None] * x + y  # a: (vertices,), x and y: (vertices, n)


axpy_tiles, n = 8, 5
axpy_graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=axpy_tiles).create_device())
a_tensor = axpy_graph.add_constant("float32", (), 3.0, "a")
x_tensor = axpy_graph.add_variable("float32", (axpy_tiles, n), "x")
y_tensor = axpy_graph.add_variable("float32", (axpy_tiles, n), "y")
axpy_graph.set_tile_mapping(a_tensor, 0)
axpy_graph.map_tensor_linearly(x_tensor, grain=n)
axpy_graph.map_tensor_linearly(y_tensor, grain=n)
axpy_set = axpy_graph.add_compute_set("axpy")
for vertex_tile in range(axpy_tiles):
    axpy_graph.add_vertex(axpy_set, axpy, {"a": a_tensor, "x": x_tensor[vertex_tile], "y": y_tensor[vertex_tile]},
                          tile=vertex_tile)

axpy_engine = poplar.Engine(axpy_graph, poplar.Execute(axpy_set))
axpy_rng = np.random.default_rng(0)
x_start, y_start = axpy_rng.standard_normal((2, axpy_tiles, n)).astype(np.float32)
axpy_engine.write_tensor(x_tensor, x_start)
axpy_engine.write_tensor(y_tensor, y_start)
axpy_timeline = axpy_engine.run()
print("equal to numpy:", np.array_equal(axpy_engine.read_tensor(y_tensor), np.float32(3.0) * x_start + y_start))
print(axpy_timeline.summary())
