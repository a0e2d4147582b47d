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
"""

from __future__ import annotations

import math

from .. import bsp
from . import messages

_input_samples_per_second = [None]
_overlapped = [True]


def simulate_input_pipeline(samples_per_second=None, overlapped=True) -> None:
    """Sets how many samples per second the simulated host's input pipeline produces (ipu-teach only).

    When the pipeline makes a step's batch more slowly than the IPU runs the step, the host is late: each step
    waits for it (``StreamCopyBegin (host late)`` in the timeline and profile), and the run is host-bound, however
    fast the device. The pipeline runs beside the device (prefetching, as ``tf.data`` and PopTorch's DataLoader
    do), so a pipeline faster than the device costs nothing. Programs compiled afterwards use the rate.

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
    _input_samples_per_second[0] = None if rate is None else float(rate)
    _overlapped[0] = overlapped


def input_pipeline_rate():
    """The simulated input pipeline's samples per second, or None when the host keeps up."""
    return _input_samples_per_second[0]


def input_pipeline_overlapped() -> bool:
    """Whether the simulated input pipeline works beside the device (True) or in the caller's thread (False)."""
    return _overlapped[0]


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


def tell_if_late(waits: tuple, samples: int, device_step_seconds: float) -> None:
    """Says, as an INFO line, that a program is host-bound and by how much."""
    if waits:
        rate = samples / (device_step_seconds + waits[0].seconds)  # the host makes them in the step plus its wait
        messages.info(
            f"The simulated input pipeline ({rate:,.0f} samples/s) is slower than the IPU runs "
            f"the program ({samples / device_step_seconds:,.0f} samples/s): each step waits "
            f"{waits[0].seconds * 1e6:,.0f} us for the host (StreamCopyBegin in the profile); the run is host-bound."
        )
