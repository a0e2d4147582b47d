"""Arrays freed at the end of a training step give their memory to the next step's arrays: with ipu_teach
imported, glibc's malloc keeps freed blocks instead of returning them to the kernel, so a loop that allocates
and frees megabyte arrays stops taking a page fault for every page it writes (``autograd.allocation``)."""

import os
import subprocess
import sys

import pytest

from ipu_teach.autograd import allocation

GLIBC = hasattr(os, "confstr") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")

# 40 steps, each writing three 4 MiB arrays (3,072 pages) that are freed at the end of the step.
STEPS = """
import resource
import numpy as np
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for step in range(40):
    a = np.ones(2**20, np.float32); b = a * 2; c = b + a
    del a, b, c
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def page_faults(prelude: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", prelude + STEPS], capture_output=True, text=True, timeout=120, check=True
    )
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (Linux); other C libraries are left alone")
def test_with_ipu_teach_imported_freed_arrays_are_reused_without_page_faults():
    plain = page_faults("")
    kept = page_faults("import ipu_teach.autograd\n")
    assert plain > 40 * 1024  # numpy alone: faults on a fresh 4 MiB (1,024 pages) or more every step
    assert kept < plain / 20  # the first step's pages only


@pytest.mark.skipif(not GLIBC, reason="the setting is glibc's (Linux)")
def test_keep_freed_memory_reports_that_glibc_took_the_setting():
    assert allocation.keep_freed_memory() is True
