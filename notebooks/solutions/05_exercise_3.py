# Exercise 3 (solution): the largest micro-batch that fits on the 64-tile IPU, by bisection.
# A batch fits when compiling does not raise ModelOutOfMemoryError; memory grows with the batch.
fits, too_big = 32, 256  # 32 fits (section 7's cure), 256 does not
while too_big - fits > 8:
    middle = (fits + too_big) // 2 // 8 * 8
    try:
        train(batch_size=middle, tiles=64, samples=2 * middle, steps_per_execution=2)
        fits = middle
    except ipu.ModelOutOfMemoryError:
        too_big = middle
print(f"largest micro-batch that fits (multiple of 8): {fits}; {too_big} does not")
