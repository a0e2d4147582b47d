"""Build the MNIST subset bundled with ipu-teach, reproducibly, from the full Keras ``mnist.npz``.

The package must train the tutorial's model offline on a fresh machine but stay small, so it ships a
real MNIST subset: 10,000 training and 2,560 test images (2,560 = 40 batches of 64, enough for the
tutorial's replication and pipelining arithmetic). Each split is drawn class-stratified (every digit
keeps its share of the full split) with a fixed seed, and keeps MNIST's original order. The random
draw uses only ``Generator.random`` + a stable argsort, whose stream numpy keeps across versions.

    python tools/make_mnist_subset.py [SOURCE] [--out FILE]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from ipu_teach.atomic import atomic_write  # noqa: E402
from ipu_teach.keras.datasets.mnist import BUNDLED_SUBSET, read_mnist_npz  # noqa: E402

DEFAULT_SOURCE = REPO.parent / "shared" / "data" / "mnist.npz"
SEED = 20_160_601
SIZES = {"train": 10_000, "test": 2_560}
MAX_BYTES = 3_000_000


def class_quotas(labels, size):
    """How many samples of each class a stratified draw of ``size`` takes (largest-remainder rounding)."""
    counts = np.bincount(labels, minlength=10)
    exact = size * counts / counts.sum()
    quotas = np.floor(exact).astype(np.int64)
    shortfall = size - quotas.sum()
    quotas[np.argsort(-(exact - quotas), kind="stable")[:shortfall]] += 1
    return quotas


def stratified_indices(labels, size, rng):
    """Sorted indices of a seeded, class-stratified random subset of ``size`` samples."""
    chosen = []
    for digit, quota in enumerate(class_quotas(labels, size)):
        members = np.flatnonzero(labels == digit)
        chosen.append(members[np.argsort(rng.random(len(members)), kind="stable")[:quota]])
    return np.sort(np.concatenate(chosen))


def build_subset(source):
    """The subset's arrays under Keras' key names, drawn from the full data set at ``source``."""
    rng = np.random.default_rng(SEED)
    arrays = {}
    for split, (x, y) in zip(SIZES, read_mnist_npz(source)):
        keep = stratified_indices(y, SIZES[split], rng)
        arrays[f"x_{split}"], arrays[f"y_{split}"] = x[keep], y[keep]
    return arrays


def write_npz_atomically(arrays, out):
    """Write ``arrays`` compressed to ``out`` via a temp file in the same folder, so ``out`` is never half-written."""
    with atomic_write(out, "wb") as stream:
        np.savez_compressed(stream, **arrays)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "source",
        nargs="?",
        type=Path,
        default=DEFAULT_SOURCE,
        help=f"the full Keras mnist.npz (default: {DEFAULT_SOURCE})",
    )
    parser.add_argument("--out", type=Path, default=BUNDLED_SUBSET, help=f"where to write (default: {BUNDLED_SUBSET})")
    args = parser.parse_args(argv)
    if not args.source.is_file():
        parser.error(f"{args.source} does not exist; pass the path of the full Keras mnist.npz")
    arrays = build_subset(args.source)
    write_npz_atomically(arrays, args.out)
    size = args.out.stat().st_size
    print(f"wrote {args.out}: {len(arrays['y_train']):,} train / {len(arrays['y_test']):,} test, {size:,} bytes")
    if size >= MAX_BYTES:
        sys.exit(f"{args.out} is {size:,} bytes, over the {MAX_BYTES:,}-byte budget for the package")


if __name__ == "__main__":
    main()
