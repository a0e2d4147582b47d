# Exercise 2 (solution): one call of a PopTorch training model runs a whole execution.
batch_size, device_iterations, replicas, accumulation = 16, 10, 4, 8

samples_per_call = batch_size * device_iterations * replicas * accumulation
samples_per_update = batch_size * replicas * accumulation  # the effective batch
print(
    f"one call consumes {samples_per_call:,} samples: {batch_size} x {device_iterations} device iterations "
    f"x {replicas} replicas x {accumulation} accumulated"
)
print(f"effective batch {samples_per_update:,}: {samples_per_call // samples_per_update} weight updates per call")
# In PopTorch one device iteration is one weight update (accumulation happens inside it), so deviceIterations=10
# makes 10 updates; in Keras steps_per_execution counts micro-batches, so the same run is steps_per_execution=80.
