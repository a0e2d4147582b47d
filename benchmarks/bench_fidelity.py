"""How close the simulator lands to the real Mk2 logs of Graphcore's Keras tutorial (the yardstick).

Runs the tutorial's four IPU configurations as the tutorial does (full MNIST, batch 64, SGD, 3 epochs,
data trimmed as its ``make_divisible`` trims it) and prints, beside the figures the tutorial's logs print
(``../shared/seeds/keras-tutorial-how-to-run-on-ipu.txt``): simulated time per step in epochs 2-3,
first-epoch time (compilation included), first-epoch training accuracy and test accuracy, with the
ratio simulated / real for each. The pipelined run is the logged one: 2 IPUs, no replication,
accumulation 8, effective batch 512. One model and one set of constants serve every configuration.

Targets: every step time and first-epoch time within 1.5x of the real one; the logs' ordering per step
(1 step per execution > 2 replicas > pipelined > whole epoch per execution); the steps_per_execution
speed-up within 1.5x of the real 17x; first-epoch accuracy within 0.06 and test accuracy within 0.03.

Uses ``../shared/data/mnist.npz`` (or ``--data``); without it the bundled subset (accuracies then are not
comparable). Takes a few minutes on 2 cores (real training). Not a test. Run:
    python benchmarks/bench_fidelity.py [--data PATH] [--epochs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import pathlib

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn

BATCH, CLASSES = 64, 10
SHARED_MNIST = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist.npz"


# name, IPUs, pipelined, accumulation, steps per execution (None: 1; "epoch": all), real figures from the logs:
# step seconds (mean of epochs 2 and 3), first epoch seconds, first-epoch accuracy, test accuracy
CONFIGURATIONS = (
    ("1 step per execution", 1, False, 1, None, (3e-3, 35.0, 0.6629, 0.9629)),
    ("whole epoch per execution", 1, False, 1, "epoch", (170.5e-6, 30.0, 0.7018, 0.9606)),
    ("2 replicas", 2, False, 1, "epoch", (222.5e-6, 31.0, 0.6814, 0.9581)),
    ("pipelined, 2 IPUs, accumulation 8", 2, True, 8, "epoch", (210e-6, 36.0, 0.6377, 0.9375)),
)


def make_divisible(number, divisor):
    return number - number % divisor


def load(path):
    with contextlib.redirect_stdout(io.StringIO()):
        (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data(path=path)
    prepare = lambda x: np.expand_dims(x.astype("float32") / 255, -1)  # noqa: E731
    return (
        (prepare(x_train), keras.utils.to_categorical(y_train, CLASSES)),
        (prepare(x_test), keras.utils.to_categorical(y_test, CLASSES)),
    )


def run(ipus, pipelined, accumulation, spe_choice, data, epochs):
    """Train and evaluate as the tutorial's completed demo does; returns (step s, first epoch s, first-epoch
    accuracy, test accuracy)."""
    (x, y), (x_test, y_test) = data
    replicas = ipus // (2 if pipelined else 1)
    train_spe = len(x) // (BATCH * replicas)
    test_spe = len(x_test) // (BATCH * replicas)
    if pipelined:
        train_spe, test_spe = make_divisible(train_spe, accumulation), make_divisible(test_spe, accumulation)
    keep = make_divisible(len(x), train_spe * BATCH * replicas)
    keep_test = make_divisible(len(x_test), test_spe * BATCH * replicas)
    if spe_choice is None:
        train_spe = test_spe = 1
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = ipus
    config.configure_ipu_system()
    times = []
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        model = keras.Model(*tutorial_model_fn(stages=pipelined, num_classes=CLASSES))
        if pipelined:
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=accumulation)
        model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=train_spe)
        record = keras.callbacks.LambdaCallback(on_epoch_end=lambda *_: times.append(model.executor().epoch_timing))
        history = model.fit(x[:keep], y[:keep], epochs=epochs, batch_size=BATCH, verbose=2, callbacks=[record])
        model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=test_spe)
        _, test_accuracy = model.evaluate(x_test[:keep_test], y_test[:keep_test], batch_size=BATCH, verbose=0)
    later = [per_step for _, per_step in times[1:]] or [times[0][1]]
    return float(np.mean(later)), times[0][0], history.history["accuracy"][0], float(test_accuracy)


def fmt_time(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_MNIST), help="Keras' mnist.npz (full MNIST)")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    path = args.data if pathlib.Path(args.data).exists() else None
    data = load(path)
    print(
        f"Data: {'full MNIST from ' + path if path else 'the bundled subset (accuracies are not comparable)'}; "
        f"{len(data[0][0]):,} train / {len(data[1][0]):,} test; {args.epochs} epochs; simulated GC200 (Mk2)\n"
    )
    header = f"{'configuration':<36}{'figure':<20}{'simulated':>12}{'real (log)':>12}{'ratio':>8}"
    print(header + "\n" + "-" * len(header))
    results = {}
    for name, ipus, pipelined, accumulation, spe, real in CONFIGURATIONS:
        simulated = run(ipus, pipelined, accumulation, spe, data, args.epochs)
        results[name] = simulated
        for figure, sim, ref, kind in zip(
            ("step (epochs 2-3)", "first epoch", "first-epoch accuracy", "test accuracy"),
            simulated,
            real,
            ("time", "s", "acc", "acc"),
        ):
            shown = (
                (fmt_time(sim), fmt_time(ref))
                if kind == "time"
                else ((f"{sim:.1f} s", f"{ref:.1f} s") if kind == "s" else (f"{sim:.4f}", f"{ref:.4f}"))
            )
            ratio = f"{sim / ref:.2f}x" if kind != "acc" else f"{sim - ref:+.3f}"
            print(f"{name if figure.startswith('step') else '':<36}{figure:<20}{shown[0]:>12}{shown[1]:>12}{ratio:>8}")
    steps = {name: result[0] for name, result in results.items()}
    order = sorted(steps, key=steps.get, reverse=True)
    real_order = [c[0] for c in sorted(CONFIGURATIONS, key=lambda c: c[5][0], reverse=True)]
    speed_up = steps["1 step per execution"] / steps["whole epoch per execution"]
    real_speed_up = CONFIGURATIONS[0][5][0] / CONFIGURATIONS[1][5][0]
    print(
        f"\nordering per step (slowest first): {' > '.join(order)}; "
        f"{'same as' if order == real_order else 'DIFFERENT FROM'} the logs"
    )
    print(
        f"steps_per_execution speed-up: {speed_up:.1f}x simulated, {real_speed_up:.1f}x real "
        f"(ratio {speed_up / real_speed_up:.2f})"
    )


if __name__ == "__main__":
    main()
