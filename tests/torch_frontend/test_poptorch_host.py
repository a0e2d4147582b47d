"""The host's side of a PopTorch call (issue 20): a slow DataLoader simulated with ipu.host.simulate_input_pipeline
makes a PopTorch model host-bound as it makes a Keras program; its workers beside the device, or ``num_workers=0``
loading in the loop's thread before each call. Times are derived from the same runs and the rate given."""

import numpy as np
import pytest
from torch_helpers import WithLoss

from ipu_teach import ipu, poptorch, torch

ITERATIONS, BATCH = 8, 4


def _call():
    """The executable of a training model called once on a combined batch of ITERATIONS x BATCH samples."""
    training = poptorch.trainingModel(WithLoss(), poptorch.Options().deviceIterations(ITERATIONS))
    samples = ITERATIONS * BATCH
    training(torch.zeros(samples, 3), torch.from_numpy(np.zeros((samples, 2), np.float32)))
    return training.get_ipu_executable()


def _waits(executable):
    return [row for row, kind in enumerate(executable.timeline.kinds) if kind == "host wait"]


def test_a_slow_dataloader_beside_the_device_makes_each_step_wait_for_its_batch():
    fast = _call()
    window = fast.seconds_per_execution / ITERATIONS  # a step and its share of the call
    rate = BATCH / (3 * window)  # a loader that takes three windows per batch
    ipu.host.simulate_input_pipeline(rate)
    slow = _call()
    [row] = _waits(slow)
    assert slow.timeline.counts[row] == ITERATIONS
    assert slow.seconds_per_execution / ITERATIONS == pytest.approx(BATCH / rate, rel=1e-5)  # the host's rate


def test_a_dataloader_without_workers_loads_each_call_before_it():
    fast = _call()
    ipu.host.simulate_input_pipeline(1e7, overlapped=False)  # faster than the device, yet in the loop's thread
    loaded = _call()
    assert not _waits(loaded) and loaded.timeline.seconds() == fast.timeline.seconds()
    assert loaded.seconds_per_execution - fast.seconds_per_execution == pytest.approx(
        ITERATIONS * BATCH / 1e7, abs=1e-9
    )


def test_without_a_simulated_pipeline_the_host_keeps_up():
    ipu.host.simulate_input_pipeline(None)
    assert not _waits(_call())
