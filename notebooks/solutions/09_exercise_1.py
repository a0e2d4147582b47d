# Exercise 1 (solution): "mixed_float16" computes in float16 but keeps the weights in float32 (Graphcore's 16.32):
# the weights take twice the bytes on every tile, and the casts to float16 and back add tensors and vertices, so
# the largest micro-batch that fits shrinks. The notebook's IPUs are back afterwards.
with ipu.system.restored_afterwards():
    mixed_largest = 0
    for mixed_batch in range(1, 9):
        if not size(resnet50, mixed_batch, policy="mixed_float16").fits:
            break
        mixed_largest = mixed_batch
    print(f"largest micro-batch that fits in mixed_float16: {mixed_largest}")
    mixed_roles = {}
    for mixed_policy in ("float16", "mixed_float16"):
        mixed = size(resnet50, 4, policy=mixed_policy)
        mixed_report = profiling.build_report(mixed.model_name, "train", mixed.executable, ipu.system.current())
        mixed_tile = int(mixed_report.compilation.tile_memory(0).argmax())
        mixed_roles[mixed_policy] = mixed_report.compilation.tile(mixed_tile).memory.byCategory
        print(f"{mixed_policy:<14} micro-batch 4: fullest tile {mixed.max_tile_bytes:,} B, fits: {mixed.fits}")
    for mixed_role, mixed_bytes in mixed_roles["mixed_float16"].items():
        mixed_before = mixed_roles["float16"].get(mixed_role, 0)
        if mixed_bytes > mixed_before:
            print(f"  {mixed_role:<24} {mixed_before:>9,} -> {mixed_bytes:>9,} B on the fullest tile")
