"""The host side of a run on the simulated IPU, as BSP programs the engine counts.

The host's figures (per execution by front end, staging a stream's bytes, a sync growing with the IPUs) are in
``hardware.HostSpec``; this module turns a run's host work into programs: the front end's call of each execution
(``bsp.HostCall``) and the device's waits for a late input pipeline (``bsp.HostWait``, PopVision's
``StreamCopyBegin``). How fast the input pipeline produces samples is a simulated setting, ipu-teach's own: on a
real system it is whatever your ``tf.data`` pipeline or DataLoader achieves, and a slow one shows as long
``StreamCopyBegin`` waits in the PopVision trace (Graphcore's TensorFlow user guide, "Efficient IPU I/O").

Example:

>>> from ipu_teach import ipu
>>> ipu.host.simulate_input_pipeline(samples_per_second=20_000)
>>> rate = ipu.host.input_pipeline_rate()
>>> rate
20000.0
>>> [p.seconds for p in ipu.host.late_host_waits(64, 1e-3, rate)]   # 3.2 ms to make 64 in a 1 ms device step
[0.0022]
>>> ipu.host.simulate_input_pipeline(None)      # back to a host that keeps up

A loop that makes its batches in the thread that calls the program (a torch ``DataLoader`` with
``num_workers=0``) hides nothing behind the device: ``simulate_input_pipeline(rate, overlapped=False)`` adds
the making of each execution's samples to the execution (:func:`caller_loading`).

>>> [p.seconds for p in ipu.host.caller_loading(samples=80, samples_per_second=10_000)]   # made before each call
[0.008]

PopTorch's asynchronous DataLoader (``DataLoaderMode.Async``) makes whole batches in worker processes beside the
calls, so an epoch of few batches starts with a fill: its first batch takes one worker's whole batch time
(:func:`asynchronous_epoch_seconds`). 15 calls of 10 ms, 16 workers that each take 0.4 s per batch:

>>> round(ipu.host.asynchronous_epoch_seconds(batches=15, call_seconds=0.01, batch_seconds=0.4, workers=16), 3)
0.53
"""

from __future__ import annotations

import math

from .. import bsp, hardware, validation
from ..session import runtime
from . import messages


def simulate_input_pipeline(samples_per_second=None, overlapped=True) -> None:
    """Sets how many samples per second the simulated host's input pipeline produces (ipu-teach only).

    When the pipeline makes a step's batch more slowly than the IPU runs the step, the host is late: each step
    waits for it (``StreamCopyBegin (host late)`` in the timeline and profile), and the run is host-bound, however
    fast the device. The pipeline runs beside the device (prefetching, as ``tf.data`` and PopTorch's DataLoader
    do), so a pipeline faster than the device costs nothing. Programs compiled afterwards use the rate: Keras'
    ``fit``, ``evaluate`` and ``predict`` and PopTorch models (at their first call).

    Args:
      samples_per_second: A positive number, or None for a host that always keeps up (the default).
      overlapped: True (the default) for a pipeline working beside the device; False for one that makes each
        execution's samples in the thread that calls the program, before the call (a torch ``DataLoader`` with
        ``num_workers=0``, or a loop whose loading and calls take turns in one Python thread): then its time adds
        to every execution, however fast the device.

    Raises:
      ValueError: for anything else, naming the argument.
    """
    rate = samples_per_second
    if rate is not None and (
        isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0
    ):
        raise ValueError(f"simulate_input_pipeline: samples_per_second must be a positive number or None, got {rate!r}")
    if not isinstance(overlapped, bool):
        raise ValueError(f"simulate_input_pipeline: overlapped must be True or False, got {overlapped!r}")
    runtime.input_samples_per_second = None if rate is None else float(rate)
    runtime.input_pipeline_overlapped = overlapped


def input_pipeline_rate():
    """The simulated input pipeline's samples per second, or None when the host keeps up."""
    return runtime.input_samples_per_second


def input_pipeline_overlapped() -> bool:
    """Whether the simulated input pipeline works beside the device (True) or in the caller's thread (False)."""
    return runtime.input_pipeline_overlapped


def execution_program(api: str = "keras", loading: tuple = ()) -> bsp.Program:
    """The host's side of one execution called from ``api`` (``hardware.HOST_APIS``), for the engine to cost:
    the making of its samples in the caller's thread (``loading``, from :func:`caller_loading`), then the call."""
    return bsp.Sequence([*loading, bsp.HostCall(api)], label="host") if loading else bsp.HostCall(api)


def caller_loading(samples: int, samples_per_second) -> tuple:
    """The ``bsp.HostWait`` of a caller making an execution's ``samples`` in its own thread before calling the
    program, at ``samples_per_second``; nothing when there is no such pipeline (None) or nothing to make."""
    if samples_per_second is None or not samples:
        return ()
    return (bsp.HostWait(samples / samples_per_second, label="loading in the caller's thread"),)


def late_host_waits(samples: int, device_step_seconds: float, samples_per_second) -> tuple:
    """The wait before each step's infeed while the input pipeline makes ``samples`` (every replica's batch):
    a ``bsp.HostWait`` of what making them takes beyond the device's step, or nothing when the host keeps up.

    Args:
      samples: Integer, the samples the host makes per step.
      device_step_seconds: The device's seconds per step without waiting (streams included).
      samples_per_second: The rate of a pipeline working beside the device (``Setup.input_samples_per_second``),
        or None for a host that keeps up. Never the global setting itself: a pipeline in the caller's thread
        (``overlapped=False``) is costed by :func:`caller_loading` instead.
    """
    late = 0.0 if samples_per_second is None else samples / samples_per_second - device_step_seconds
    return (bsp.HostWait(late),) if late > 0 else ()


def asynchronous_epoch_seconds(batches: int, call_seconds: float, batch_seconds: float, workers: int) -> float:
    """Seconds of an epoch after the first of a loop calling a model once per batch of PopTorch's asynchronous
    DataLoader, from its ``iter()`` to the end of its last call (what a progress bar over the epoch times).

    How the loader works (graphcore/poptorch python/_dataloader.py): a process of its own takes the batches of a torch
    DataLoader, whose ``workers`` processes each make whole batches (a poptorch DataLoader's batch is one call's
    combined batch: ``batch_seconds`` each), up to ``HOST.loader_prefetch_factor`` batches ahead per worker; it
    writes them in order into a ring buffer of ``HOST.async_loader_buffer_size`` slots, and a call uses its batch in
    place, so a slot is free again only when the loop asks for the next batch. At the end of the data it needs a
    free slot to mark the epoch's end, then starts the next epoch's batches at once (``load_indefinitely``), while
    the loop still calls the model on the last batches in the buffer. So each epoch starts with a fill: its first
    batch takes one worker's whole batch time, less those last calls. With few batches and many workers an epoch
    is that fill plus its calls; with many batches, the calls or the workers' rate (``workers / batch_seconds``
    batches per second), whichever is slower. Each worker is taken to have a core of its own; the copies of a
    batch between processes are left out (measured: a batch of 4,000 torchvision MNIST samples made in a persistent
    worker process costs the same processor time per sample as in the caller's thread,
    benchmarks/measure_torchvision_loading.py). The workers live from epoch to epoch: a poptorch DataLoader's
    ``persistent_workers`` defaults to True when it has workers (graphcore/poptorch python/__init__.py).

    Args:
      batches: Integer, the batches (calls) of an epoch.
      call_seconds: Seconds of one call of the model (the host's call, the device's execution).
      batch_seconds: Seconds one worker process takes to make one batch.
      workers: Integer, the DataLoader's ``num_workers`` (at least 1).

    Raises:
      ValueError: for a count that is not a positive integer or a time that is negative, naming the argument.
    """
    for name, count in (("batches", batches), ("workers", workers)):
        validation.positive_count(count, f"asynchronous_epoch_seconds: {name}")
    for name, value in (("call_seconds", call_seconds), ("batch_seconds", batch_seconds)):
        validation.seconds(value, f"asynchronous_epoch_seconds: {name}")
    slots, ahead = hardware.HOST.async_loader_buffer_size, hardware.HOST.loader_prefetch_factor * workers
    ends = []  # the end of each call, over the epochs: the loop frees a batch's slot when its call ends
    epoch_ends, start = [], 0.0  # ``start``: when the workers start on an epoch's batches
    for _ in range(3):  # the first epoch starts empty; the third is as every later one
        worker_free, taken, written = [start] * workers, [], start
        for i in range(batches):
            slot_free = ends[len(ends) - slots] if len(ends) >= slots else 0.0
            dispatched = start if i < ahead else taken[i - ahead]
            ready = max(dispatched, worker_free[i % workers]) + batch_seconds
            worker_free[i % workers] = ready
            taken.append(max(ready, written))  # asked for once the batch before is written
            written = max(taken[-1], slot_free)
            ends.append(max(written, ends[-1] if ends else 0.0) + call_seconds)
        start = max(written, ends[len(ends) - slots] if len(ends) >= slots else 0.0)  # the end mark's slot
        epoch_ends.append(ends[-1])
    return epoch_ends[-1] - epoch_ends[-2]


def tell_if_late(waits: tuple, samples: int, device_step_seconds: float) -> None:
    """Says, as an INFO line, that a program is host-bound and by how much."""
    if waits:
        rate = samples / (device_step_seconds + waits[0].seconds)  # the host makes them in the step plus its wait
        messages.info(
            f"The simulated input pipeline ({rate:,.0f} samples/s) is slower than the IPU runs "
            f"the program ({samples / device_step_seconds:,.0f} samples/s): each step waits "
            f"{waits[0].seconds * 1e6:,.0f} us for the host (StreamCopyBegin in the profile); the run is host-bound."
        )
