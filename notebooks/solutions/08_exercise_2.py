# Exercise 2 (solution): four forward stages make 2 x 4 - 1 = 7 pipeline stages in training (the backward passes
# add three; the last IPU's forward and backward share one), so PopTorch accepts gradientAccumulation(7) and up.
# Every weight update pays the pipeline's ramp-up and ramp-down, in which some IPUs idle; the more micro-batches
# share them, the larger the part of the time all four IPUs are busy, so the images per second grow with the
# accumulation count (at the price of fewer weight updates per image). The notebook's IPUs are back afterwards.
four_ipus = {"layer2": 1, "layer3": 2, "layer4": 3}
with ipu.system.restored_afterwards():
    shallow_opts = poptorch.Options().deviceIterations(2)
    shallow_opts.Training.gradientAccumulation(6)
    try:
        compiled(shallow_opts, blocks=four_ipus)
    except poptorch.Error as error:
        print(error)
    for four_accumulation in (7, 16, 64):
        four_opts = poptorch.Options().deviceIterations(2)
        four_opts.Training.gradientAccumulation(four_accumulation)
        four_seconds = compiled(four_opts, blocks=four_ipus).get_ipu_executable().seconds_per_execution
        four_images = 8 * 2 * four_accumulation
        print(
            f"gradientAccumulation({four_accumulation:>2}): {four_images:>5} images per call, "
            f"{four_images / four_seconds:>7,.0f} images/s (simulated)"
        )
