"""Training samples/s of the tutorial's MNIST CNN: ipu-teach's ``fit`` (on the CPU path, with portable
numerics, and inside IPUStrategy) against real tf-keras (and PyTorch eager, if installed) from a separate
reference environment, and a plain-numpy reference written here, at 1 and 2 threads.

Model: Conv2D(32, 3x3, relu) -> MaxPool 2x2 -> Conv2D(64, 3x3, relu) -> MaxPool 2x2 -> Flatten
-> Dropout(0.5) -> Dense(10, softmax); SGD(0.01), categorical cross-entropy, batch 64.

How it is fair. Every contender runs in its own persistent worker process, its thread count set before its
libraries load (BLAS, OpenMP, TensorFlow's intra- and inter-op pools, torch), and is warmed up (imports,
graph tracing, the IPU's compilation) before timing. The workers train in turn, round by round, each on the
same batches, one at a time (the others wait, idle), so that load from other processes on a shared machine
falls on all of them alike. A round is 40 batches through ``fit`` (or the equivalent loop); each contender's
figure is the median of the rounds. OpenBLAS runs with the course kernels' OPENBLAS_THREAD_TIMEOUT (unless set
already; ``BLAS_THREAD_TIMEOUT``). Processor time (all of a worker's threads) is printed beside wall time:
threads that busy-wait show as processor time without samples, and on a busy machine the processor-time
ratio is the steadier one. No timed unit tests: this script prints ratios, it asserts nothing.

The reference environment (never a test dependency): ``benchmarks/requirements-reference.txt``, e.g.
    python3 -m venv .venv-reference && .venv-reference/bin/pip install -r benchmarks/requirements-reference.txt
Run:
    PYTHONPATH=. python benchmarks/bench_training.py --reference-python .venv-reference/bin/python
        [--rounds 5] [--batches 40] [--threads 1 2]
(or set IPU_TEACH_REFERENCE_PYTHON). Without a reference environment, ipu-teach and numpy are compared alone.
"""

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BATCH, CLASSES, LEARNING_RATE, DROPOUT = 64, 10, 0.01, 0.5
REPO_ROOT = Path(__file__).resolve().parent.parent
TARGETS = {  # issue 27's targets, on the tutorial's CNN and a 2-core machine
    ("ipu-teach", "tf-keras", 1): 1.0,
    ("ipu-teach", "tf-keras", 2): 0.8,
    ("ipu-teach IPUStrategy", "ipu-teach", None): 0.9,
    ("ipu-teach portable", "ipu-teach", None): 0.8,
}


BLAS_THREAD_TIMEOUT = "4"
"""OpenBLAS' idle threads stop spinning at once, as in the course's kernels (``ipu_teach/notebook_environment.py``):
the setting a learner's notebook trains with; without it, at two threads an idle BLAS thread spins between products
and doubles ipu-teach's (and plain numpy's) processor time per sample. TensorFlow and torch do not read it."""


def set_threads(threads: int) -> None:
    """Before numpy, TensorFlow or torch load their thread pools."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)


# ----- contenders (each built inside its worker) ---------------------------------------------------


class IpuTeach:
    """ipu-teach's Keras ``fit`` on the CPU path."""

    def __init__(self, threads, portable=False, strategy=False):
        import ipu_teach.keras as keras
        from ipu_teach import autograd
        from ipu_teach.examples import configure_ipus, tutorial_model_fn

        autograd.set_portable_numerics(portable)
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        self.scope = contextlib.nullcontext
        if strategy:
            from ipu_teach import ipu

            configure_ipus(1)
            self.scope = ipu.ipu_strategy.IPUStrategy().scope
        with self.scope():
            self.model = keras.Model(*tutorial_model_fn(num_classes=CLASSES))  # Dropout(DROPOUT), as the others
            self.model.compile(
                keras.optimizers.SGD(learning_rate=LEARNING_RATE), "categorical_crossentropy", metrics=["accuracy"]
            )

    def train(self, x, y):
        with self.scope():
            self.model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)


class TfKeras:
    """Real tf-keras (Keras 2 on TensorFlow), its default SGD, ``fit`` as a user calls it."""

    def __init__(self, threads):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2, as tools/make_keras_goldens.py
        import tensorflow as tf
        import tf_keras as keras

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
        keras.utils.set_random_seed(0)
        layers = keras.layers
        self.model = keras.Sequential(
            [
                keras.Input(shape=(28, 28, 1)),
                layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
                layers.MaxPooling2D(pool_size=(2, 2)),
                layers.Flatten(),
                layers.Dropout(DROPOUT),
                layers.Dense(CLASSES, activation="softmax"),
            ]
        )
        self.model.compile(
            keras.optimizers.SGD(learning_rate=LEARNING_RATE), "categorical_crossentropy", metrics=["accuracy"]
        )

    def train(self, x, y):
        self.model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0, shuffle=False)


class TorchEager:
    """PyTorch eager on the CPU, the same model (NCHW, as PyTorch's default layout)."""

    def __init__(self, threads):
        import torch
        from torch import nn

        torch.set_num_threads(threads)
        torch.set_num_interop_threads(threads)
        torch.manual_seed(0)
        self.torch = torch
        self.model = nn.Sequential(
            nn.Conv2d(1, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Dropout(DROPOUT),
            nn.Linear(1600, CLASSES),
        )
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=LEARNING_RATE)
        self.model.train()

    def train(self, x, y):
        torch = self.torch
        x = torch.from_numpy(x.transpose(0, 3, 1, 2).copy())  # as a DataLoader hands batches over
        y = torch.from_numpy(y.argmax(1))
        for start in range(0, len(x), BATCH):
            self.optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(self.model(x[start : start + BATCH]), y[start : start + BATCH])
            loss.backward()
            self.optimizer.step()


class NumpyReference:
    """The same model and maths in plain numpy (im2col, one product per layer), for scale."""

    def __init__(self, threads):
        import numpy as np

        self.np = np
        rng = np.random.default_rng(0)
        self.k1 = _glorot(rng, (9, 32), 9, 9 * 32)
        self.k2 = _glorot(rng, (288, 64), 288, 9 * 64)
        self.w = _glorot(rng, (1600, CLASSES), 1600, CLASSES)
        self.b1, self.b2, self.b = (np.zeros(n, np.float32) for n in (32, 64, CLASSES))
        self.rng = rng

    def step(self, x, y):
        np, n = self.np, len(x)
        cols1 = _im2col(x, 3)
        a1 = np.maximum(cols1 @ self.k1 + self.b1, 0).reshape(n, 26, 26, 32)
        p1, mask1 = _max_pool_2x2(a1)
        cols2 = _im2col(p1, 3)
        a2 = np.maximum(cols2 @ self.k2 + self.b2, 0).reshape(n, 11, 11, 64)
        p2, mask2 = _max_pool_2x2(a2)
        keep = (self.rng.random((n, 1600), dtype=np.float32) >= DROPOUT) * np.float32(1 / (1 - DROPOUT))
        d = p2.reshape(n, 1600) * keep
        logits = d @ self.w + self.b
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        g = (probs - y) / n
        gw, gb = d.T @ g, g.sum(axis=0)
        gp2 = ((g @ self.w.T) * keep).reshape(n, 5, 5, 64)
        gz2 = (_max_pool_2x2_backward(gp2, mask2, a2.shape) * (a2 > 0)).reshape(-1, 64)
        gk2, gb2 = cols2.T @ gz2, gz2.sum(axis=0)
        gp1 = _col2im(gz2 @ self.k2.T, p1.shape, 3)
        gz1 = (_max_pool_2x2_backward(gp1, mask1, a1.shape) * (a1 > 0)).reshape(-1, 32)
        gk1, gb1 = cols1.T @ gz1, gz1.sum(axis=0)
        for param, grad in ((self.k1, gk1), (self.b1, gb1), (self.k2, gk2), (self.b2, gb2), (self.w, gw), (self.b, gb)):
            param -= LEARNING_RATE * grad

    def train(self, x, y):
        for start in range(0, len(x), BATCH):
            self.step(x[start : start + BATCH], y[start : start + BATCH])


def _glorot(rng, shape, fan_in, fan_out):
    limit = (6 / (fan_in + fan_out)) ** 0.5
    return rng.uniform(-limit, limit, size=shape).astype("float32")


def _im2col(x, k):
    """(n, h, w, c) -> (n * ho * wo, k * k * c) patches, one strided copy per kernel offset."""
    import numpy as np

    n, h, w, c = x.shape
    ho, wo = h - k + 1, w - k + 1
    cols = np.empty((n, ho, wo, k, k, c), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, :, i, j, :] = x[:, i : i + ho, j : j + wo, :]
    return cols.reshape(n * ho * wo, k * k * c)


def _col2im(dcols, shape, k):
    import numpy as np

    n, h, w, c = shape
    ho, wo = h - k + 1, w - k + 1
    dcols = dcols.reshape(n, ho, wo, k, k, c)
    dx = np.zeros(shape, dtype=dcols.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, i : i + ho, j : j + wo, :] += dcols[:, :, :, i, j, :]
    return dx


def _max_pool_2x2(x):
    """Forward and the first-maximum mask of each 2x2 window (rows and columns beyond pairs dropped)."""
    n, h, w, c = x.shape
    windows = x[:, : h // 2 * 2, : w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c)
    out = windows.max(axis=(2, 4))
    is_max = windows == out[:, :, None, :, None, :]
    seen = is_max[:, :, 0, :, 0, :].copy()
    for i, j in ((0, 1), (1, 0), (1, 1)):
        here = is_max[:, :, i, :, j, :]
        is_max[:, :, i, :, j, :] = here & ~seen
        seen |= here
    return out, is_max


def _max_pool_2x2_backward(grad, is_max, shape):
    import numpy as np

    n, h, w, c = shape
    dx = np.zeros(shape, dtype=grad.dtype)
    dx[:, : h // 2 * 2, : w // 2 * 2, :] = (grad[:, :, None, :, None, :] * is_max).reshape(n, h // 2 * 2, w // 2 * 2, c)
    return dx


CONTENDERS = {  # name: (class, keyword arguments, runs in the reference environment)
    "ipu-teach": (IpuTeach, {}, False),
    "ipu-teach portable": (IpuTeach, {"portable": True}, False),
    "ipu-teach IPUStrategy": (IpuTeach, {"strategy": True}, False),
    "numpy": (NumpyReference, {}, False),
    "tf-keras": (TfKeras, {}, True),
    "torch": (TorchEager, {}, True),
}


# ----- the worker: one contender, one process ------------------------------------------------------


def worker(name: str, threads: int, data_dir: str) -> None:
    """Builds the contender, warms it up, then trains on each ``{"start", "samples"}`` line of stdin and answers
    ``{"wall", "processor"}`` seconds on stdout. A contender that cannot be built answers ``{"error"}``."""
    set_threads(threads)
    channel = os.fdopen(os.dup(1), "w")  # answers only: whatever the contender prints goes to the log
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def answer(message):
        print(json.dumps(message), file=channel, flush=True)

    import numpy as np

    x = np.load(Path(data_dir) / "x.npy", allow_pickle=False)
    y = np.load(Path(data_dir) / "y.npy", allow_pickle=False)
    cls, kwargs, _ = CONTENDERS[name]
    try:
        contender = cls(threads, **kwargs)
        contender.train(x[: 2 * BATCH], y[: 2 * BATCH])  # warm-up: first calls allocate, import, trace, compile
    except ImportError as error:
        answer({"error": f"{type(error).__name__}: {error}"})
        return
    answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        xs = x[request["start"] : request["start"] + request["samples"]]
        ys = y[request["start"] : request["start"] + request["samples"]]
        wall, processor = time.perf_counter(), time.process_time()
        contender.train(xs, ys)
        wall, processor = time.perf_counter() - wall, time.process_time() - processor
        answer({"wall": wall, "processor": processor})


class Worker:
    """The parent's handle on one worker process."""

    def __init__(self, name, threads, data_dir, python, log):
        self.name = name
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
        env.setdefault("OPENBLAS_THREAD_TIMEOUT", BLAS_THREAD_TIMEOUT)
        self.process = subprocess.Popen(
            [python, __file__, "--worker", name, "--threads", str(threads), "--data", data_dir],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env=env,
            cwd=REPO_ROOT,
        )
        self.error = None

    def wait_ready(self) -> bool:
        line = self.process.stdout.readline()
        answer = json.loads(line) if line else {"error": "the worker stopped (see its log)"}
        self.error = answer.get("error")
        return self.error is None

    def train(self, start, samples) -> dict:
        self.process.stdin.write(json.dumps({"start": start, "samples": samples}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} worker stopped; its log follows")
        return json.loads(line)

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


# ----- the parent: rounds, medians, ratios ---------------------------------------------------------


def load_average() -> str:
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def write_data(data_dir: Path, samples: int) -> int:
    """MNIST as the tutorial prepares it (scaled to [0, 1], one-hot labels), saved for the workers; returns
    how many samples were saved (at most ``samples``: the bundled subset has 10,000)."""
    import numpy as np

    import ipu_teach.keras as keras

    (x, y), _ = keras.datasets.mnist.load_data()
    x = (x[:samples].astype("float32") / 255)[..., None]
    np.save(data_dir / "x.npy", x, allow_pickle=False)
    np.save(data_dir / "y.npy", keras.utils.to_categorical(y[:samples], CLASSES).astype("float32"), allow_pickle=False)
    return len(x)


def run_threads(threads, args, data_dir, available, log) -> dict:
    """{name: (samples/s wall, samples per processor-second)} at ``threads`` threads, medians of the rounds."""
    workers = []
    for name, (_, _, reference) in CONTENDERS.items():
        python = args.reference_python if reference else sys.executable
        if python is None:
            print(f"  {name}: no reference environment (--reference-python), skipped")
            continue
        workers.append(Worker(name, threads, str(data_dir), python, log))
    ready = []
    for w in workers:
        if w.wait_ready():
            ready.append(w)
        else:
            print(f"  {w.name}: not run ({w.error})")
            w.stop()
    samples = args.batches * BATCH
    times = {w.name: [] for w in ready}
    print(f"  load average before: {load_average()}")
    for round_ in range(args.rounds):
        start = (round_ * samples) % (available - samples + 1) // BATCH * BATCH
        order = ready[round_ % len(ready) :] + ready[: round_ % len(ready)]  # who goes first rotates
        for w in order:
            times[w.name].append(w.train(start, samples))
        line = "  ".join(f"{name} {samples / t[-1]['wall']:.0f}" for name, t in times.items())
        print(f"  round {round_ + 1}: {line}  samples/s (wall)")
    print(f"  load average after: {load_average()}")
    for w in ready:
        w.stop()
    return {
        name: (
            samples / statistics.median(t["wall"] for t in runs),
            samples / statistics.median(t["processor"] for t in runs),
        )
        for name, runs in times.items()
    }


def ratios(results: dict) -> list:
    """Lines of ratios against the targets, wall and processor time."""
    lines = []
    for (ours, theirs, threads), target in TARGETS.items():
        for t, rates in results.items():
            if (threads is not None and t != threads) or ours not in rates or theirs not in rates:
                continue
            wall, processor = (rates[ours][i] / rates[theirs][i] for i in (0, 1))
            met = "met" if wall >= target else "NOT met"
            lines.append(
                f"{t} thread(s): {ours} / {theirs}: {wall:.2f}x wall, {processor:.2f}x processor "
                f"(target >= {target}x: {met})"
            )
    for t, rates in results.items():
        for other in ("numpy", "torch"):
            if other in rates and "ipu-teach" in rates:
                wall, processor = (rates["ipu-teach"][i] / rates[other][i] for i in (0, 1))
                lines.append(f"{t} thread(s): ipu-teach / {other}: {wall:.2f}x wall, {processor:.2f}x processor")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the median is taken; at least 5)")
    parser.add_argument("--batches", type=int, default=40, help="batches of 64 per contender per round")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--samples", type=int, default=10_240, help="training samples the rounds walk through")
    parser.add_argument(
        "--reference-python",
        default=os.environ.get("IPU_TEACH_REFERENCE_PYTHON"),
        help="the reference environment's python, with tensorflow-cpu and tf-keras (and torch)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.threads[0], args.data)
        return
    if args.rounds < 5:
        parser.error("--rounds must be at least 5 (medians of at least 5 rounds)")
    results = {}
    with tempfile.TemporaryDirectory() as data_dir, open(Path(data_dir) / "workers.log", "w+") as log:
        available = write_data(Path(data_dir), args.samples)
        if available < args.batches * BATCH:
            parser.error(f"only {available} training samples: fewer than one round (--batches x 64)")
        try:
            for threads in args.threads:
                print(f"{threads} thread(s) each, batch {BATCH}, {args.rounds} rounds of {args.batches} batches:")
                results[threads] = run_threads(threads, args, data_dir, available, log)
        except RuntimeError:
            log.seek(0)
            print(log.read()[-4000:], file=sys.stderr)
            raise
        log.seek(0)
        errors = [line for line in log if "Error" in line or "Traceback" in line]
    print(f"\nmedians ({os.cpu_count()} processors):")
    for threads, rates in results.items():
        for name, (wall, processor) in rates.items():
            print(f"{threads} thread(s) {name:>22}: {wall:7.0f} samples/s wall, {processor:7.0f} per processor-second")
    print()
    print("\n".join(ratios(results)))
    if errors:
        print("\nworkers' errors:\n" + "".join(errors))


if __name__ == "__main__":
    main()
