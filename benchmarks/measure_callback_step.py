"""Measures the host's work per step when Keras' callbacks run once per step: the source of
``hardware.HostSpec.callback_step_s`` (Graphcore's ``model.set_asynchronous_callbacks(True)``).

With asynchronous callbacks Graphcore's Keras runs a polling thread beside the execution
(graphcore/keras keras/ipu/extensions/polling_thread.py): it iterates the outfeed, then for each step calls
``on_test_batch_begin(step)`` and ``on_test_batch_end(step, logs)`` of the callbacks (``evaluate``'s
defaults: ``ProgbarLogger`` and ``History``), and the progress bar converts the logs' tensors to numbers.
The outfeed's iterator (graphcore/tensorflow tensorflow/python/ipu/ipu_outfeed_queue.py @b2127bb,
``IPUOutfeedQueueIterator.__next__``) dequeues every result available at once (``IPUOutfeedMode.ALL``: one
tensor per log, a row per step) and cuts out each step's logs with an eager ``result[i]`` per log. This script
does that work with real tf-keras: an eager ``tf.data`` iterator's ``next()`` stands in for the dequeue (taken
once per execution, the least it can be), each step's four scalar logs are sliced out as the iterator slices
them (an ``evaluate`` with loss, accuracy, AUC and top-k accuracy logs), and the callbacks run. It prints the
median processor time per step over several runs (processor time, not wall-clock, so that the other
sessions of a shared machine count less: they still slow it through the shared caches and cores, so measure
when the machine is quiet), and, for comparison, the same with one ``next()`` per step and no
slicing (how this figure was measured before). There is no IPU here: it measures only the host's side.

Runs in the reference environment (real TensorFlow and tf-keras, ``requirements-reference.txt``), never
in ipu-teach's tests:
    TF_USE_LEGACY_KERAS=1 nice .venv-reference/bin/python benchmarks/measure_callback_step.py
"""

import argparse
import contextlib
import io
import os
import statistics
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

LOGS = {"loss": 0.5, "accuracy": 0.8, "auc": 0.9, "top_k_categorical_accuracy": 0.95}
"""One step's logs as they come off the outfeed: four scalars (the TF2 TensorBoard tutorial's evaluate)."""


def step_logs_sliced(steps: int):
    """Each step's logs as Graphcore's outfeed iterator yields them: one dequeue of every step's results (a tensor
    per log, a row per step), then each step's row of each log cut out by an eager ``result[i]``."""
    results = next(iter(tf.data.Dataset.from_tensors({k: tf.fill([steps], v) for k, v in LOGS.items()})))
    flat_results = tf.nest.flatten(results)
    for step in range(steps):
        yield tf.nest.pack_sequence_as(results, [result[step] for result in flat_results])


def step_logs_dequeued(steps: int):
    """Each step's logs from one ``next()`` of an eager iterator per step (the earlier stand-in, no slicing)."""
    iterator = iter(tf.data.Dataset.from_tensors({k: tf.constant(v) for k, v in LOGS.items()}).repeat())
    for _ in range(steps):
        yield next(iterator)


def one_run(model, steps: int, step_logs=step_logs_sliced) -> float:
    """Seconds per step of ``steps`` steps of the outfeed's logs + the default callbacks, progress bar shown."""
    callbacks = keras.callbacks.CallbackList(
        None, add_history=True, add_progbar=True, model=model, verbose=1, epochs=1, steps=steps
    )
    with contextlib.redirect_stdout(io.StringIO()):
        callbacks.on_test_begin()
        start = time.process_time()
        for step, data in enumerate(step_logs(steps)):
            callbacks.on_test_batch_begin(step)
            callbacks.on_test_batch_end(step, data)
        seconds = time.process_time() - start
        callbacks.on_test_end(data)
    return seconds / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=128, help="steps per run: per execution (default 128)")
    parser.add_argument("--runs", type=int, default=7, help="runs, the median is printed (default 7)")
    args = parser.parse_args()
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
    one_run(model, 100)  # warm-up: the first calls trace and cache
    one_run(model, 100, step_logs_dequeued)
    sliced, dequeued = [], []
    for _ in range(args.runs):  # alternated, so that the machine's load weighs on both alike
        sliced.append(one_run(model, args.steps))
        dequeued.append(one_run(model, args.steps, step_logs_dequeued))
    print(
        f"TensorFlow {tf.__version__}, tf-keras {keras.__version__}; {args.runs} runs of {args.steps} steps; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for label, per_step in (("outfeed iterator's slices", sliced), ("one next() per step", dequeued)):
        print(
            f"{label}: runs (us/step) "
            + ", ".join(f"{s * 1e6:.0f}" for s in per_step)
            + f"; median {statistics.median(per_step) * 1e6:.0f} us per step"
        )


if __name__ == "__main__":
    main()
