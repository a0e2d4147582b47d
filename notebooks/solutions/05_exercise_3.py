# Exercise 3 (solution): the largest micro-batch that fits on the 64-tile IPU, by bisection.
# A batch fits when compiling does not raise ModelOutOfMemoryError; memory grows with the batch.
# The notebook's IPU configuration is back afterwards, and its `too_big` (section 7's error) is left alone.
fits, does_not_fit = 32, 256   # 32 fits (section 7's cure), 256 does not
with ipu.system.restored_afterwards():
    while does_not_fit - fits > 8:
        middle = (fits + does_not_fit) // 2 // 8 * 8
        try:
            train(batch_size=middle, tiles=64, samples=2 * middle, steps_per_execution=2)
            fits = middle
        except ipu.ModelOutOfMemoryError:
            does_not_fit = middle
print(f"largest micro-batch that fits (multiple of 8): {fits}; {does_not_fit} does not")
