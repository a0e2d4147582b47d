"""PopTorch's asynchronous DataLoader over an epoch (ipu.host.asynchronous_epoch_seconds, issue 20): worker
processes each make whole batches into a ring buffer of hardware.HOST.async_loader_buffer_size slots, and the next
epoch's batches start once the end of the data has a slot. Every expected time is derived from the arguments and
HostSpec's figures."""

import pytest

from ipu_teach import hardware, ipu

epoch = ipu.host.asynchronous_epoch_seconds
SLOTS = hardware.HOST.async_loader_buffer_size


def test_a_loader_faster_than_the_calls_costs_nothing():
    # a worker makes a batch before the buffer's other batches are used up: the loop never waits
    call = 0.01
    assert epoch(batches=15, call_seconds=call, batch_seconds=(SLOTS - 1) * call / 2, workers=1) == pytest.approx(
        15 * call
    )


def test_with_more_workers_than_batches_each_epoch_starts_with_one_workers_whole_batch():
    """The pipelining tutorial's shape: 15 batches, 16 workers. The next epoch's batches start while the loop still
    calls the model on the batches left in the buffer, so the fill is one batch's time less those calls."""
    call, batch = 0.01, 0.4
    assert epoch(batches=15, call_seconds=call, batch_seconds=batch, workers=16) == pytest.approx(
        batch + (15 - (SLOTS - 1)) * call
    )
    # more workers do not shorten it: every batch is made by one worker, whole
    assert epoch(batches=15, call_seconds=call, batch_seconds=batch, workers=64) == epoch(15, call, batch, 16)


def test_a_host_bound_loop_runs_at_the_workers_rate():
    batch, workers = 0.2, 4
    seconds = epoch(batches=400, call_seconds=1e-6, batch_seconds=batch, workers=workers)
    assert 400 / seconds == pytest.approx(workers / batch, rel=1e-4)
    # twice the workers, twice the rate, while the calls keep up
    assert epoch(400, 1e-6, batch, 2 * workers) == pytest.approx(seconds / 2, rel=1e-4)


def test_a_device_bound_loop_runs_at_the_calls_rate_whatever_the_workers():
    call = 0.05
    assert epoch(batches=200, call_seconds=call, batch_seconds=0.1, workers=8) == pytest.approx(200 * call)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"batches": 0}, "batches must be a positive integer, got 0"),
        ({"workers": 2.0}, "workers must be a positive integer, got 2.0"),
        ({"workers": True}, "workers must be a positive integer, got True"),
        ({"call_seconds": -1.0}, "call_seconds must be a number of seconds >= 0, got -1.0"),
        ({"batch_seconds": float("nan")}, "batch_seconds must be a number of seconds >= 0, got nan"),
    ],
)
def test_the_arguments_are_checked(arguments, message):
    given = {"batches": 15, "call_seconds": 0.01, "batch_seconds": 0.4, "workers": 16, **arguments}
    with pytest.raises(ValueError, match=f"asynchronous_epoch_seconds: {message}"):
        epoch(**given)
