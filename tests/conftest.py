"""Every test starts as a new Python process would: ``ipu_teach.reset_session()`` (layer names, seeds,
no IPU system configured, the default IPU-POD16, no executable cache, no report capture) and no
TF_POPLAR_FLAGS / POPLAR_ENGINE_OPTIONS from the environment. One fixture, so no test depends on
which tests ran before it in the same worker."""

import contextlib
import os
import threading

import pytest

import ipu_teach


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)
    ipu_teach.reset_session()
    yield
    ipu_teach.reset_session()


@pytest.fixture
def fifo():
    """``fifo(path)`` makes a FIFO (named pipe) at ``path``. A reader that waits on it (the bug the tests
    using this look for) is let go after 10 s by a writer that opens it, so the test fails, not hangs."""
    timers = []

    def release(path):
        with contextlib.suppress(OSError):  # ENXIO: no reader is waiting, nothing to release
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    def make(path):
        os.mkfifo(path)
        timers.append(threading.Timer(10, release, [path]))
        timers[-1].daemon = True
        timers[-1].start()
        return path

    yield make
    for timer in timers:
        timer.cancel()
