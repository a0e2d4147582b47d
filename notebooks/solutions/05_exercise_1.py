# Exercise 1 (solution): what fills the fullest tile, and which layers hold the most activations?
# `report` is the tutorial model's report from section 2. Activations are named "<layer>/<op>:<n>/output".
compilation = report.compilation
memory = compilation.tile_memory(0)
fullest = int(memory.argmax())
print(f"fullest tile {fullest}: {memory[fullest]:,} bytes")
for name, category, nbytes in compilation.tile_variables(0, fullest)[:5]:
    print(f"  {name:<32}{category:<24}{nbytes:>8,} B")
by_layer = {}
for variable in compilation.variables:
    if variable.category == "activations":
        layer = variable.name.split("/")[0]
        by_layer[layer] = by_layer.get(layer, 0) + variable.size
for layer, nbytes in sorted(by_layer.items(), key=lambda kv: -kv[1]):
    print(f"{layer:<16}{nbytes:>12,} bytes of activations over the IPU")
# The first convolution's outputs (26 x 26 x 32 floats per sample, twice: Conv2D and its ReLU) dominate:
# they are the largest tensors of the forward pass, and all of them stay live until the backward pass.
