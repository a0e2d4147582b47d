# Exercise 2 (solution): six vertices per tile fill the six worker threads. The workers are
# barrel-scheduled: they take turns issuing one instruction each, so every worker issues once in 6 cycles.
# Splitting one tile's 600 instructions of work into k vertices costs 6 * ceil(k / 6) * 600 / k cycles:
# 3600, 1800, 1200, 900, 720, 600, then no better (7 vertices -> two rounds on one worker).
from ipu_teach.bsp import poplar


@poplar.codelet(inouts={"x": None})
def double(x):
    return 2 * x


def cycles_with(vertices, work=600):
    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=1).create_device())
    data = graph.add_variable("float32", (vertices, 4), "data")
    graph.set_tile_mapping(data, 0)
    compute_set = graph.add_compute_set("double")
    for i in range(vertices):
        vertex = graph.add_vertex(compute_set, double, {"x": data[i]}, tile=0)
        graph.set_perf_estimate(vertex, work // vertices)
    return poplar.Engine(graph, poplar.Execute(compute_set)).run().totals()["compute"]


for vertex_count in (1, 2, 3, 4, 5, 6, 8, 12):
    print(f"{vertex_count:>2} vertices on one tile: {cycles_with(vertex_count):>4} compute cycles")
