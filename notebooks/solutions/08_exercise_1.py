# Exercise 1 (solution): the combined batch is 4 x 20 x 2 x 8 = 1,280 images per call, so the 2,400 training
# images make one call (poptorch.DataLoader drops the last, incomplete combined batch, as drop_last=True does by
# default). Each of the 20 device iterations is one weight update, from 4 x 2 x 8 = 64 images: 2 replicas each
# accumulating 8 micro-batches of 4.
exercise_opts = poptorch.Options().deviceIterations(20).replicationFactor(2)
exercise_opts.Training.gradientAccumulation(8)
exercise_loader = poptorch.DataLoader(exercise_opts, train_subset, batch_size=4)
dropped = len(train_subset) - len(exercise_loader) * exercise_loader.combinedBatchSize
print(f"one call takes {exercise_loader.combinedBatchSize:,} images: 4 x 20 iterations x 2 replicas x 8 accumulated")
print(f"{len(exercise_loader)} call(s) per pass over {len(train_subset):,} images ({dropped:,} left over, dropped)")
print(f"{exercise_opts.device_iterations} weight updates per call, each from {4 * 2 * 8} images")
