"""Measures how many MNIST samples one Python process makes through torchvision's MNIST dataset with the
tutorials' ``ToTensor`` and ``Normalize`` and a torch DataLoader's collation: the cross-check of
``fidelity_cases.json``'s ``input_pipelines.torchvision-mnist-per-process`` (a property of the host's loop, which
ipu-teach simulates with ``ipu.host.simulate_input_pipeline`` and ``ipu.host.asynchronous_epoch_seconds``).

The data set is torchvision's own ``MNIST`` class reading the raw IDX files of a temporary folder filled with
random digits (the values do not change the work: every image is 28 x 28 bytes); the transform is the PopTorch
pipelining and PopXL tutorials' ``Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])``; the loader is a
``torch.utils.data.DataLoader`` with ``num_workers=0`` and one intra-op thread, as a DataLoader worker process
runs (torch sets one thread in its workers). It prints the process's CPU time per sample (median of several
runs; CPU time, not wall-clock, so that other work on a shared machine counts less) for the batch sizes the
tutorials use: 80 (PopXL's inference), 8 (PopXL's training) and 4,000 (the pipelining tutorial's combined batch),
and, for 4,000, the same made by one and by two persistent DataLoader worker processes (PopTorch's asynchronous
DataLoader's workers), whose processor time includes collating into shared memory and handing the batch over.

Runs in a reference environment with real torch and torchvision, never in ipu-teach's tests:
    nice .venv-torch/bin/python benchmarks/measure_torchvision_loading.py
"""

import argparse
import gc
import os
import resource
import statistics
import struct
import tempfile
import time

import numpy as np
import torch
import torchvision


def mnist_folder(root: str, samples: int) -> None:
    """Raw MNIST IDX files of ``samples`` random digits (train and test alike) where torchvision looks for them."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (samples, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, samples, dtype=np.uint8)
    for split in ("train", "t10k"):
        with open(os.path.join(raw, f"{split}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, samples, 28, 28) + images.tobytes())
        with open(os.path.join(raw, f"{split}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, samples) + labels.tobytes())


def seconds_per_sample(dataset, batch: int, samples: int) -> float:
    """CPU seconds per sample of a DataLoader making ``samples`` samples in batches of ``batch``."""
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=True, num_workers=0, drop_last=True)
    batches = samples // batch
    start = time.process_time()
    for count, _ in enumerate(loader, start=1):
        if count == batches:
            break
    return (time.process_time() - start) / (batches * batch)


def seconds_per_sample_in_workers(dataset, batch: int, samples: int, workers: int = 2, epochs: int = 2) -> float:
    """Processor seconds per sample of ``workers`` persistent worker processes making ``epochs`` epochs of
    ``samples`` in batches of ``batch`` (as PopTorch's DataLoader runs them: ``persistent_workers`` defaults to
    True with workers), their collation into shared memory and hand-over included; read from the workers'
    rusage once they have exited."""
    subset = torch.utils.data.Subset(dataset, range(samples))
    loader = torch.utils.data.DataLoader(
        subset, batch_size=batch, shuffle=True, num_workers=workers, drop_last=True, persistent_workers=True
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    made = sum(len(images) for _ in range(epochs) for images, _ in loader)
    del loader  # shuts the workers down, so that their processor time is counted
    gc.collect()
    time.sleep(1.0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / made


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8000, help="samples per run (default 8000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per batch size, the median is printed (default 5)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    transform = torchvision.transforms.Compose(
        [torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((0.1307,), (0.3081,))]
    )
    with tempfile.TemporaryDirectory() as root:
        mnist_folder(root, max(args.samples, 4000))
        dataset = torchvision.datasets.MNIST(root, train=True, download=False, transform=transform)
        seconds_per_sample(dataset, 80, 800)  # warm-up
        print(
            f"torch {torch.__version__}, torchvision {torchvision.__version__}; load average {os.getloadavg()[0]:.1f}"
        )
        for batch in (80, 8, 4000):
            runs = [seconds_per_sample(dataset, batch, max(args.samples, batch)) for _ in range(args.runs)]
            median = statistics.median(runs)
            print(
                f"batch {batch:>5}: runs "
                + ", ".join(f"{s * 1e6:.0f}" for s in runs)
                + f" us/sample; median {median * 1e6:.0f} us, {1 / median:,.0f} samples/s per process"
            )
        for workers in (1, 2):  # one alone: the worker's path; two: also two processes sharing the machine
            samples = max(args.samples, 8000)
            runs = [seconds_per_sample_in_workers(dataset, 4000, samples, workers) for _ in range(args.runs)]
            print(
                f"batch  4000 in {workers} persistent worker process(es): runs "
                + ", ".join(f"{s * 1e6:.0f}" for s in runs)
                + f" us/sample; median {statistics.median(runs) * 1e6:.0f} us"
            )


if __name__ == "__main__":
    main()
