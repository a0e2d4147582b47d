# Exercise 3 (solution): y = a * x + y (axpy) with one vertex per tile; `a` is a constant on tile 0,
# so every other tile receives its 4 bytes by exchange before computing.
import numpy as np

from ipu_teach.bsp import poplar


@poplar.codelet(inputs={"a": "", "x": "n"}, inouts={"y": "n"})
def axpy(a, x, y):
    return a[:, None] * x + y  # a: (vertices,), x and y: (vertices, n)


tiles, n = 8, 5
graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=tiles).create_device())
a = graph.add_constant("float32", (), 3.0, "a")
x = graph.add_variable("float32", (tiles, n), "x")
y = graph.add_variable("float32", (tiles, n), "y")
graph.set_tile_mapping(a, 0)
graph.map_tensor_linearly(x, grain=n)
graph.map_tensor_linearly(y, grain=n)
compute_set = graph.add_compute_set("axpy")
for tile in range(tiles):
    graph.add_vertex(compute_set, axpy, {"a": a, "x": x[tile], "y": y[tile]}, tile=tile)

engine = poplar.Engine(graph, poplar.Execute(compute_set))
rng = np.random.default_rng(0)
x_values, y_values = rng.standard_normal((2, tiles, n)).astype(np.float32)
engine.write_tensor(x, x_values)
engine.write_tensor(y, y_values)
timeline = engine.run()
print("equal to numpy:", np.array_equal(engine.read_tensor(y), np.float32(3.0) * x_values + y_values))
print(timeline.summary())
