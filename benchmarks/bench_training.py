"""Training samples/s of the tutorial's MNIST CNN through ``ipu_teach.keras`` ``fit``, against a
plain-numpy reference (written here: same model, same maths, careful im2col) and PyTorch eager on
the CPU when torch is importable; ipu-teach runs twice, as by default and with portable numerics
(what the tests and notebooks use). All use 2 threads.

Model: Conv2D(32, 3x3, relu) -> MaxPool 2x2 -> Conv2D(64, 3x3, relu) -> MaxPool 2x2 -> Flatten
-> Dropout(0.5) -> Dense(10, softmax); SGD(0.01), categorical cross-entropy, batch 64.

The contenders alternate in rounds within one run (after a warm-up), so that load from other
processes on a shared machine falls on all of them alike. Prints samples/s per contender, the
ratios ipu-teach / numpy, ipu-teach / torch (and with portable numerics), and the target (ipu-teach >=
1.0x PyTorch eager).
Not a test. Run:
    PYTHONPATH=. python benchmarks/bench_training.py [--rounds 5] [--samples 384]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "2"  # before numpy (and torch) load their BLAS

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import ipu_teach.keras as keras  # noqa: E402
from ipu_teach import autograd  # noqa: E402
from ipu_teach.examples import tutorial_model_fn  # noqa: E402

BATCH, CLASSES, LEARNING_RATE, DROPOUT, TARGET = 64, 10, 0.01, 0.5, 1.0


def load_mnist():
    (x_train, y_train), _ = keras.datasets.mnist.load_data()
    x = (x_train.astype("float32") / 255)[..., None]
    return x, keras.utils.to_categorical(y_train, CLASSES).astype("float32")


# ----- ipu-teach -----------------------------------------------------------------------------------


class IpuTeach:
    name = "ipu-teach"

    def __init__(self):
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        self.model = keras.Model(*tutorial_model_fn(num_classes=CLASSES))  # Dropout(DROPOUT), as the reference
        self.model.compile(
            keras.optimizers.SGD(learning_rate=LEARNING_RATE), "categorical_crossentropy", metrics=["accuracy"]
        )

    def train(self, x, y):
        self.model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)


class IpuTeachPortable(IpuTeach):
    """The same, with portable numerics (float64 sums and functions: the same bits on every CPU), as the
    tests and notebooks run."""

    name = "ipu-teach portable"

    def train(self, x, y):
        autograd.set_portable_numerics(True)
        try:
            super().train(x, y)
        finally:
            autograd.set_portable_numerics(False)


# ----- plain numpy ---------------------------------------------------------------------------------


def glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape).astype(np.float32)


def im2col(x, k):
    """(n, h, w, c) -> (n * ho * wo, k * k * c) patches, one strided copy per kernel offset."""
    n, h, w, c = x.shape
    ho, wo = h - k + 1, w - k + 1
    cols = np.empty((n, ho, wo, k, k, c), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, :, i, j, :] = x[:, i : i + ho, j : j + wo, :]
    return cols.reshape(n * ho * wo, k * k * c)


def col2im(dcols, shape, k):
    n, h, w, c = shape
    ho, wo = h - k + 1, w - k + 1
    dcols = dcols.reshape(n, ho, wo, k, k, c)
    dx = np.zeros(shape, dtype=dcols.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, i : i + ho, j : j + wo, :] += dcols[:, :, :, i, j, :]
    return dx


def max_pool_2x2(x):
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


def max_pool_2x2_backward(grad, is_max, shape):
    n, h, w, c = shape
    dx = np.zeros(shape, dtype=grad.dtype)
    dx[:, : h // 2 * 2, : w // 2 * 2, :] = (grad[:, :, None, :, None, :] * is_max).reshape(n, h // 2 * 2, w // 2 * 2, c)
    return dx


class NumpyReference:
    name = "numpy"

    def __init__(self):
        rng = np.random.default_rng(0)
        self.k1 = glorot(rng, (9, 32), 9, 9 * 32)
        self.k2 = glorot(rng, (288, 64), 288, 9 * 64)
        self.w = glorot(rng, (1600, CLASSES), 1600, CLASSES)
        self.b1, self.b2, self.b = (np.zeros(n, np.float32) for n in (32, 64, CLASSES))
        self.rng = rng

    def step(self, x, y):
        n = len(x)
        cols1 = im2col(x, 3)
        a1 = np.maximum(cols1 @ self.k1 + self.b1, 0).reshape(n, 26, 26, 32)
        p1, mask1 = max_pool_2x2(a1)
        cols2 = im2col(p1, 3)
        a2 = np.maximum(cols2 @ self.k2 + self.b2, 0).reshape(n, 11, 11, 64)
        p2, mask2 = max_pool_2x2(a2)
        keep = (self.rng.random((n, 1600), dtype=np.float32) >= DROPOUT) * np.float32(1 / (1 - DROPOUT))
        d = p2.reshape(n, 1600) * keep
        logits = d @ self.w + self.b
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
        loss = -np.mean(np.sum(y * np.log(probs + 1e-7), axis=1))

        g = (probs - y) / n
        gw, gb = d.T @ g, g.sum(axis=0)
        gp2 = ((g @ self.w.T) * keep).reshape(n, 5, 5, 64)
        gz2 = (max_pool_2x2_backward(gp2, mask2, a2.shape) * (a2 > 0)).reshape(-1, 64)
        gk2, gb2 = cols2.T @ gz2, gz2.sum(axis=0)
        gp1 = col2im(gz2 @ self.k2.T, p1.shape, 3)
        gz1 = (max_pool_2x2_backward(gp1, mask1, a1.shape) * (a1 > 0)).reshape(-1, 32)
        gk1, gb1 = cols1.T @ gz1, gz1.sum(axis=0)
        for param, grad in ((self.k1, gk1), (self.b1, gb1), (self.k2, gk2), (self.b2, gb2), (self.w, gw), (self.b, gb)):
            param -= LEARNING_RATE * grad
        return loss

    def train(self, x, y):
        for start in range(0, len(x), BATCH):
            self.step(x[start : start + BATCH], y[start : start + BATCH])


# ----- PyTorch eager -------------------------------------------------------------------------------


class TorchEager:
    name = "torch"

    def __init__(self):
        import torch
        from torch import nn

        torch.set_num_threads(2)
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

    def prepare(self, x, y):
        """NCHW tensors and class indices, made once, outside the timing (fit takes numpy as it is)."""
        return self.torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))), self.torch.from_numpy(y.argmax(1))

    def train(self, x, y):
        loss_fn = self.torch.nn.functional.cross_entropy
        for start in range(0, len(x), BATCH):
            self.optimizer.zero_grad()
            loss = loss_fn(self.model(x[start : start + BATCH]), y[start : start + BATCH])
            loss.backward()
            self.optimizer.step()


def make_contenders():
    contenders = [IpuTeach(), IpuTeachPortable(), NumpyReference()]
    try:
        contenders.append(TorchEager())
    except ImportError:
        print("torch is not importable: comparing with numpy only")
    return contenders


def load_average() -> str:
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--samples", type=int, default=384, help="samples per contender per round (multiple of 64)")
    args = parser.parse_args()
    x, y = load_mnist()
    contenders = make_contenders()
    data = {c.name: c.prepare(x, y) if hasattr(c, "prepare") else (x, y) for c in contenders}
    for c in contenders:  # warm-up: first calls allocate, import and build
        cx, cy = data[c.name]
        c.train(cx[: 2 * BATCH], cy[: 2 * BATCH])
    print(f"load average before: {load_average()}")
    seconds = {c.name: 0.0 for c in contenders}
    done = 0
    for round_ in range(args.rounds):
        start = (round_ * args.samples) % (len(x) - args.samples)
        line = []
        for c in contenders:
            cx, cy = data[c.name]
            began = time.perf_counter()
            c.train(cx[start : start + args.samples], cy[start : start + args.samples])
            elapsed = time.perf_counter() - began
            seconds[c.name] += elapsed
            line.append(f"{c.name} {args.samples / elapsed:7.0f}")
        done += args.samples
        print(f"round {round_ + 1}: " + "  ".join(line) + "  samples/s")
    rate = {name: done / s for name, s in seconds.items()}
    print(f"load average after: {load_average()}")
    print(f"batch {BATCH}, 2 threads, {args.rounds} rounds x {args.samples} samples each")
    for name, value in rate.items():
        print(f"{name:>10}: {value:7.0f} samples/s")
    print(f"ipu-teach / numpy: {rate['ipu-teach'] / rate['numpy']:.2f}x")
    print(
        f"portable numerics cost: ipu-teach portable / ipu-teach: {rate['ipu-teach portable'] / rate['ipu-teach']:.2f}x"
    )
    if "torch" in rate:
        ratio = rate["ipu-teach"] / rate["torch"]
        print(f"ipu-teach / torch: {ratio:.2f}x (target >= {TARGET}x: {'met' if ratio >= TARGET else 'NOT met'})")
        print(f"ipu-teach portable / torch: {rate['ipu-teach portable'] / rate['torch']:.2f}x")


if __name__ == "__main__":
    main()
