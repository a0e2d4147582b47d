# Exercise 1 (solution): the 256 x 32 matrix-vector product on 4, 16 and 64 tiles.
# Compute: each tile runs ceil(rows per tile / 6 workers) rounds of one dot-product vertex
# (10 + 32 + 32 + 1 = 75 instructions); the six workers take turns, one instruction each, so a round
# lasts 6 x 75 = 450 cycles: 64 rows/tile -> 11 rounds, 16 -> 3, 4 -> 1.
# Exchange: x lives on tile 0 and every other tile needs it. The IPU's exchange is receiver-selected:
# tile 0 puts its 128 bytes on the exchange once and every tile picks them up, so the exchange costs
# 128 / 4 = 32 cycles whatever the tile count. What limits the speed-up is the compute that no longer
# shrinks (one round of vertices per tile once rows per tile <= 6) and the fixed sync per superstep.
import math

from ipu_teach.bsp import poplar


@poplar.codelet(inputs={"row": "n", "vec": "n"}, outputs={"out": ""})
def row_dot(row, vec):
    return (row * vec).sum(axis=-1)


def matrix_vector_totals(rows, cols, tiles):
    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=tiles).create_device())
    A = graph.add_variable("float32", (rows, cols), "A")
    x = graph.add_variable("float32", (cols,), "x")
    y = graph.add_variable("float32", (rows,), "y")
    graph.map_tensor_linearly(A, grain=cols)
    graph.map_tensor_linearly(y)
    graph.set_tile_mapping(x, 0)
    compute_set = graph.add_compute_set("mv")
    row_tiles = graph.tile_of(y)
    for i in range(rows):
        graph.add_vertex(compute_set, row_dot, {"row": A[i], "vec": x, "out": y[i]}, tile=int(row_tiles[i]))
    return poplar.Engine(graph, poplar.Execute(compute_set)).run().totals()


for tile_count in (4, 16, 64):
    rounds = math.ceil(256 / tile_count / 6)
    predicted = {"compute": rounds * 6 * 75, "exchange": 128 // 4}  # rounds x 6-cycle turns x 75; one broadcast
    simulated = matrix_vector_totals(256, 32, tile_count)
    print(f"{tile_count:>2} tiles: predicted compute {predicted['compute']:,} and exchange {predicted['exchange']} cycles; "
          f"simulated compute {simulated['compute']:,} and exchange {simulated['exchange']} cycles")
