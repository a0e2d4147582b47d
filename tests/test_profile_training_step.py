"""benchmarks/profile_training_step.py's per-thread accounting: the critical path and parallel efficiency it prints
come from every thread's processor time, which a second thread's work must show up in."""

import threading
import time

import pytest

from tests.helpers.scripts import load_script

profile = load_script("benchmarks/profile_training_step.py")


def test_per_thread_takes_each_threads_time_since_before_largest_first_and_drops_idle_ones():
    before = {1: 1.0, 2: 5.0, 3: 2.0}
    after = {1: 1.5, 2: 5.1, 3: 2.0, 4: 0.3}  # thread 4 started in between; thread 3 did nothing
    assert profile.per_thread(before, after, steps=10) == pytest.approx([50.0, 30.0, 10.0])


def test_thread_summary_prints_the_critical_path_and_the_parallel_efficiency():
    assert profile.thread_summary([6.0, 3.0, 1.0], cores=2).splitlines() == [
        "per thread (processor ms / step): 6.00, 3.00, 1.00",
        "critical path 6.00 ms, sum 10.00 ms, parallel efficiency 83% of 2 thread(s)",
    ]


def test_a_second_threads_processor_time_is_counted():
    """A thread that keeps a core busy shows, under its id, its own processor time (``time.thread_time`` inside it)."""
    spent, done, measured = {}, threading.Event(), threading.Event()

    def busy():
        began = time.thread_time()
        while time.thread_time() - began < 0.2:
            pass
        spent[threading.get_native_id()] = time.thread_time() - began
        done.set()
        measured.wait()  # alive until its time has been read: an ended thread leaves /proc/self/task

    before = profile.thread_seconds()
    worker = threading.Thread(target=busy)
    worker.start()
    done.wait()
    after = profile.thread_seconds()
    measured.set()
    worker.join()
    if not after:
        pytest.skip("no /proc/self/task here")
    ((tid, seconds),) = spent.items()
    assert tid not in before and after[tid] == pytest.approx(seconds, abs=0.02)
