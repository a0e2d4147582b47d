# Exercise 1 (solution): what fills the fullest tile, and which layers hold the most activations?
# `report` is the tutorial model's report from section 2. Activations are named "<layer>/<op>:<n>/output".
# (The names here are the solution's own: the notebook's `compilation`, `memory`, `fullest` are left alone.)
report_memory = report.compilation.tile_memory(0)
fullest_tile = int(report_memory.argmax())
print(f"fullest tile {fullest_tile}: {report_memory[fullest_tile]:,} bytes")
for variable_name, variable_category, nbytes in report.compilation.tile_variables(0, fullest_tile)[:5]:
    print(f"  {variable_name:<32}{variable_category:<24}{nbytes:>8,} B")
by_layer = {}
for variable in report.compilation.variables:
    if variable.category == "activations":
        layer = variable.name.split("/")[0]
        by_layer[layer] = by_layer.get(layer, 0) + variable.size
for layer, nbytes in sorted(by_layer.items(), key=lambda kv: -kv[1]):
    print(f"{layer:<16}{nbytes:>12,} bytes of activations over the IPU")
# The first convolution's outputs (26 x 26 x 32 floats per sample, twice: Conv2D and its ReLU) dominate:
# they are the largest tensors of the forward pass, and all of them stay live until the backward pass.
