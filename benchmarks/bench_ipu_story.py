"""The tutorial's story in numbers, from the simulated IPU clock (never wall-clock).

For the tutorial's MNIST CNN (Conv2D 32 -> MaxPool -> Conv2D 64 -> MaxPool -> Flatten -> Dropout ->
Dense 10, SGD, batch 64) this compiles one training executable per configuration and reads the
cost of one execution from the executor (host overhead + the BSP Engine's cycles for infeed,
``steps_per_execution`` steps, the all-reduce and the weight updates). Nothing is trained, so it
runs in seconds; compile time is a one-off and is left out of the per-step figures.

1. ``steps_per_execution``: simulated time per step with 1 step per execution against a whole epoch
   per execution (target: >= 10x, because host overhead dominates a model this small).
2. Replication: samples/s with 1 and 2 replicas, each with a whole epoch per execution (target: 2
   replicas faster, but less than 2x, because gradients are all-reduced over IPU-Links every step).
3. Scaling: samples/s from 1 to 64 replicas (an IPU-POD64 beyond 16) at the same steps per execution
   for every replica count (so the host overhead per step does not change with the replicas and the
   table shows the all-reduce alone), with Graphcore's default all-reduce (one per variable) and with
   the gradients merged into one (``IPUConfig.optimizations.maximum_cross_replica_sum_buffer_size``).

The epoch is the tutorial's full MNIST (60,000 images) by default; the images come from whatever
``keras.datasets.mnist.load_data()`` returns (the bundled subset offline). Not a test. Run:
    PYTHONPATH=. python benchmarks/bench_ipu_story.py [--epoch-samples 60000]
"""

import argparse
import contextlib
import io

import ipu_teach.keras as keras
from ipu_teach import data, ipu
from ipu_teach.examples import tutorial_model_fn
from ipu_teach.keras.engine.data_adapter import get_data_adapter

BATCH, CLASSES = 64, 10
SPE_TARGET = 10.0
POD16_REPLICAS = (1, 2, 4, 8, 16)
POD64_REPLICAS = (32, 64)


def tutorial_model():
    return keras.Model(*tutorial_model_fn(num_classes=CLASSES))


def one_batch():
    (x_train, y_train), _ = keras.datasets.mnist.load_data()
    x = (x_train[:BATCH].astype("float32") / 255)[..., None]
    return x, keras.utils.to_categorical(y_train[:BATCH], CLASSES)


MERGED = 10 * 1024 * 1024  # the cross-replica-sum buffer Graphcore's applications use to merge all-reduces


def training_executable(batch, replicas, steps_per_execution, system="IPU-POD16", buffer=0):
    """The executable ``fit`` would run for ``replicas`` replicas and ``steps_per_execution`` steps
    (an epoch of exactly one execution): compiled, costed, not trained."""
    ipu.system.reset()
    ipu.system.use_system(system)
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = replicas
    config.optimizations.maximum_cross_replica_sum_buffer_size = buffer
    config.configure_ipu_system()
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = tutorial_model()
        model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=steps_per_execution)
    batches = data.Dataset.from_tensor_slices(batch).batch(BATCH, drop_remainder=True).repeat()
    adapter = get_data_adapter(batches, steps=steps_per_execution * replicas, what="fit")
    with contextlib.redirect_stdout(io.StringIO()):  # the INFO lines are the tests' business
        model.executor().prepare(model, "train", adapter)
    return model.get_ipu_executable("train")


def per_step_seconds(executable, steps_per_execution):
    return executable.seconds_per_execution / steps_per_execution


def samples_per_second(executable, steps_per_execution, replicas):
    return steps_per_execution * BATCH * replicas / executable.seconds_per_execution


def verdict(holds):
    return "holds" if holds else "DOES NOT HOLD"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--epoch-samples", type=int, default=60_000, help="samples in one epoch (the tutorial's MNIST: 60,000)"
    )
    args = parser.parse_args()
    batch = one_batch()
    epoch_steps = args.epoch_samples // BATCH
    print(
        f"Tutorial CNN, batch {BATCH}, epoch of {args.epoch_samples:,} samples ({epoch_steps} steps); "
        "simulated IPU time (Mk2)\n"
    )

    single = training_executable(batch, 1, 1)
    whole = training_executable(batch, 1, epoch_steps)
    one, many = per_step_seconds(single, 1), per_step_seconds(whole, epoch_steps)
    print("1. steps_per_execution")
    print(f"   compile (first epoch only): {single.compile_seconds:.1f} s simulated")
    print(f"   steps_per_execution=1       : {one * 1e6:9.1f} us/step (simulated)")
    print(f"   steps_per_execution={epoch_steps:<8d}: {many * 1e6:9.1f} us/step (simulated)")
    print(f"   ratio {one / many:.1f}x (target >= {SPE_TARGET:.0f}x): {verdict(one / many >= SPE_TARGET)}\n")

    two_replicas = training_executable(batch, 2, epoch_steps // 2)
    rate_one, rate_two = (
        samples_per_second(whole, epoch_steps, 1),
        samples_per_second(two_replicas, epoch_steps // 2, 2),
    )
    two = rate_two / rate_one
    print("2. replication (whole epoch per execution)")
    print(f"   1 replica : {rate_one:12,.0f} samples/s (simulated)")
    print(f"   2 replicas: {rate_two:12,.0f} samples/s (simulated)")
    print(f"   speed-up {two:.2f}x (target: > 1x and < 2x): {verdict(1 < two < 2)}\n")

    steps = epoch_steps // max(POD64_REPLICAS)
    print(f"3. scaling ({steps} steps per execution for every replica count)")
    print(f"   {'':>8} {'all-reduce per variable':>33}   {'all-reduce merged':>33}")
    print(f"   {'replicas':>8}" + f" {'us/step':>9} {'samples/s':>12} {'efficiency':>10}" * 2)
    base = {}
    for replicas in POD16_REPLICAS + POD64_REPLICAS:
        system = "IPU-POD16" if replicas in POD16_REPLICAS else "IPU-POD64"
        cells = []
        for buffer in (0, MERGED):
            executable = training_executable(batch, replicas, steps, system, buffer)
            rate = samples_per_second(executable, steps, replicas)
            base.setdefault(buffer, rate)
            cells.append(
                f" {per_step_seconds(executable, steps) * 1e6:9.1f} {rate:12,.0f} "
                f"{rate / base[buffer] / replicas:10.0%}"
            )
        print(f"   {replicas:8d}" + "".join(cells))
    ipu.system.reset()


if __name__ == "__main__":
    main()
