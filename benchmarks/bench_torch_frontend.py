"""Host time of the PyTorch front end's training loop against the Keras path, on the same model and data.

Target (issue 23): ipu_teach.torch trains at least 0.8x as fast as Keras' fit on the workshop's MNIST CNN (two
conv-pool-ReLU blocks, Dense 128, Dense 10; batch 8, SGD), both on the host's numpy. Each round times one epoch
of 800 random images in each front end, alternating (the machine's load varies); prints the best of each and
their ratio (Keras seconds / torch seconds: above 1 the torch loop is faster).
Run: PYTHONPATH=. python benchmarks/bench_torch_frontend.py
"""

import time

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import torch

SAMPLES, BATCH, ROUNDS, TARGET = 800, 8, 3, 0.8


def torch_epoch(x, y):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10),
    )  # fmt: skip
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    data = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    start = time.perf_counter()
    for xb, yb in torch.utils.data.DataLoader(data, batch_size=BATCH):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        optimizer.step()
    return time.perf_counter() - start


def keras_epoch(x, y):
    layers = keras.layers
    model = keras.Sequential([
        layers.Conv2D(32, 3, input_shape=(28, 28, 1)), layers.MaxPooling2D(2), layers.ReLU(), layers.Conv2D(64, 3),
        layers.MaxPooling2D(2), layers.ReLU(), layers.Flatten(), layers.Dense(128, activation="relu"), layers.Dense(10),
    ])  # fmt: skip
    model.compile(keras.optimizers.SGD(0.05), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    start = time.perf_counter()
    model.fit(x.transpose(0, 2, 3, 1), y, batch_size=BATCH, epochs=1, verbose=0)
    return time.perf_counter() - start


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, SAMPLES)
    torch_best = keras_best = float("inf")
    for _ in range(ROUNDS):
        torch_best = min(torch_best, torch_epoch(x, y))
        keras_best = min(keras_best, keras_epoch(x, y))
    ratio = keras_best / torch_best
    print(f"one epoch of {SAMPLES} images, batch {BATCH}: torch {torch_best:.2f} s, Keras {keras_best:.2f} s")
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(f"torch throughput / Keras throughput: {ratio:.2f} (target >= {TARGET}: {verdict})")


if __name__ == "__main__":
    main()
