"""Measures the host's work per step when Keras' callbacks run once per step: the source of
``hardware.HostSpec.callback_step_s`` (Graphcore's ``model.set_asynchronous_callbacks(True)``).

With asynchronous callbacks Graphcore's Keras runs a polling thread beside the execution
(graphcore/keras keras/ipu/extensions/polling_thread.py): for each step it dequeues the step's results from
the outfeed, then calls ``on_test_batch_begin(step)`` and ``on_test_batch_end(step, logs)`` of the
callbacks (``evaluate``'s defaults: ``ProgbarLogger`` and ``History``), and the progress bar converts the
logs' tensors to numbers. This script does that work with real tf-keras, with an eager ``tf.data``
iterator's ``next()`` standing in for the outfeed's dequeue (one eager op returning the step's logs: four
scalars, as an ``evaluate`` with loss, accuracy, AUC and top-k accuracy logs), and prints the median time
per step over several runs. There is no IPU here: it measures only the host's side.

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


def one_run(model, steps: int) -> float:
    """Seconds per step of ``steps`` steps of dequeue + the default callbacks, progress bar shown."""
    iterator = iter(tf.data.Dataset.from_tensors({k: tf.constant(v) for k, v in LOGS.items()}).repeat())
    callbacks = keras.callbacks.CallbackList(
        None, add_history=True, add_progbar=True, model=model, verbose=1, epochs=1, steps=steps
    )
    with contextlib.redirect_stdout(io.StringIO()):
        callbacks.on_test_begin()
        start = time.perf_counter()
        for step in range(steps):
            data = next(iterator)
            callbacks.on_test_batch_begin(step)
            callbacks.on_test_batch_end(step, data)
        seconds = time.perf_counter() - start
        callbacks.on_test_end(data)
    return seconds / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps per run (default 1000)")
    parser.add_argument("--runs", type=int, default=7, help="runs, the median is printed (default 7)")
    args = parser.parse_args()
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(1,))])
    one_run(model, 100)  # warm-up: the first calls trace and cache
    per_step = [one_run(model, args.steps) for _ in range(args.runs)]
    print(f"TensorFlow {tf.__version__}, tf-keras {keras.__version__}; {args.runs} runs of {args.steps} steps")
    print("runs (us/step): " + ", ".join(f"{s * 1e6:.0f}" for s in per_step))
    print(f"median: {statistics.median(per_step) * 1e6:.0f} us per step (outfeed-like dequeue + callbacks + logs)")


if __name__ == "__main__":
    main()
