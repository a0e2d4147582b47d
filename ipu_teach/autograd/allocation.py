"""Freed arrays' memory is kept for the next training step instead of being given back to the operating system.

Why. A training step allocates dozens of arrays of a few megabytes (patches, activations, gradients) and
frees them all when the step ends. glibc's ``malloc``, which numpy uses, serves blocks above its mmap
threshold (128 KiB at first, raised as such blocks are freed, at most 32 MiB) with fresh pages from the
kernel and gives them back on ``free``, and trims free memory off its heap's top beyond twice that
threshold: every step then pays a page fault for each 4 KiB it writes, and the kernel zeroes every page.
Measured on the tutorial's CNN (batch 64, one thread, a busy 2-core machine): a quarter of the CPU path's
processor time. Deep-learning frameworks keep pools of their own (TensorFlow's BFC allocator, PyTorch's
caching allocator); here ``malloc`` is told to do the same, with ``mallopt``: blocks up to 32 MiB come
from its heap, and up to 256 MiB of free memory stays there. The numbers computed do not change, only
where their memory comes from. Other C libraries (macOS, Windows, musl) are left as they are.
"""

import ctypes
import os

MMAP_THRESHOLD = 32 * 2**20  # glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit): bigger blocks are still mmap-ed
TRIM_THRESHOLD = 256 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>


def keep_freed_memory() -> bool:
    """Tells glibc's ``malloc`` to keep freed blocks of up to ``MMAP_THRESHOLD`` bytes for reuse (True), or
    does nothing where the C library is not glibc (False)."""
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc"):
            return False
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, TypeError, ValueError):  # no confstr (Windows), no such name, no mallopt
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
