"""Large element-wise passes split by samples over a few threads, so that they use the cores BLAS uses.

numpy releases the GIL inside its loops, so two threads each running a pass over half the samples (the leading
axis) run at once. Each value is computed by the same loop from the same operands as in one pass over the whole
array, so the result is the same, bit for bit (NaN, infinities and signed zeros included): an element-wise pass does
not depend on how it is split. Only passes whose samples are independent may be split this way (no sums across
samples), and only those whose NaN bits do not depend on the array's shape: where two NaNs meet in an addition, which
one's sign numpy keeps depends on the loop it picks for the shape (the tutorial's first layer's input gradient,
``conv.col2im``'s scatter-add, kept a NaN's sign whole and flipped it split, with NaN of both signs in its terms), so
sums are left whole. The passes split (copies, products with a mask, maxima) give the same bits on any split, which
tests/autograd/test_parallel.py checks with NaN of both signs, infinities, signed zeros and subnormals.

The threads: as many as the user gave BLAS (``OPENBLAS_NUM_THREADS``, else ``OMP_NUM_THREADS``, read when
ipu_teach loads, as OpenBLAS reads them when numpy loads), else the cores this process may use; at most
``MAX_THREADS``. One means no pool and no cost. The pool is made at the first split, its threads wait on a queue
(they never spin), and a ``fork`` child drops its parent's pool (its threads are not copied) and makes its own.
"""

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

MAX_THREADS = 4  # beyond a laptop's cores the passes are bound by memory bandwidth, not by cores
SPLIT_ABOVE = 2**18
"""Values a pass must touch to be split. Handing pieces to the pool and waiting for them costs about 30 us (measured:
a split pass over 2**13-2**15 values took 27-33 us more than the whole one); a pass over 2**18 float32 values (ReLU's
gradient, a product with a mask) takes about 100 us on one core, so a second idle core saves about 50 us there and
less than the hand-over below 2**17 (benchmarks/README.md, sixth round)."""


def threads_from_environment(environ=os.environ) -> int:
    """The thread count the user chose for BLAS, else the cores this process may use, from 1 to ``MAX_THREADS``."""
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = environ.get(variable, "").split(",")[0].strip()  # OMP_NUM_THREADS may list nested levels: "4,2"
        if value.isdigit() and int(value) > 0:
            return min(int(value), MAX_THREADS)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


THREADS = threads_from_environment()

_pool = None  # (threads, ThreadPoolExecutor) once a pass has been split
_pool_lock = threading.Lock()
_splitting = threading.local()  # set while this thread runs a piece: a piece's own passes are not split again


def _drop_pool_in_child():
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_pool_in_child)


def _executor(threads):
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != threads:
            if _pool is not None:
                _pool[1].shutdown(wait=False)
            _pool = (threads, ThreadPoolExecutor(threads - 1, thread_name_prefix="ipu-teach-samples"))
        return _pool[1]


def sample_pieces(samples: int, threads: int) -> list:
    """``range(samples)`` as at most ``threads`` slices of nearly equal length, in order."""
    pieces = max(1, min(threads, samples))
    bounds = [samples * piece // pieces for piece in range(pieces + 1)]
    return [slice(start, stop) for start, stop in zip(bounds, bounds[1:])]


def for_samples(step, samples: int, values: int) -> None:
    """``step(slice)`` for slices covering ``range(samples)``: one call with every sample, or, for a pass touching
    more than ``SPLIT_ABOVE`` values with more than one thread, one call per thread at once (this thread runs the
    first, and every piece sees this thread's ``np.errstate``). ``step`` must only write the given samples of its
    outputs. Returns when every piece is done; an error in a piece is raised here."""
    threads = THREADS
    if threads < 2 or samples < 2 or values <= SPLIT_ABOVE or getattr(_splitting, "active", False):
        step(slice(0, samples))
        return
    first, *rest = sample_pieces(samples, threads)
    # each piece runs in a copy of this thread's context with this thread's error handling: numpy 2 keeps
    # np.errstate in a context variable, numpy 1 per thread (so it is also set in the piece's thread)
    errors = np.geterr()
    futures = [
        _executor(threads).submit(contextvars.copy_context().run, _run_piece, step, piece, errors) for piece in rest
    ]
    try:
        _run_piece(step, first, errors)
    finally:
        wait(futures)
    for future in futures:
        future.result()


def _run_piece(step, piece, errors):
    _splitting.active = True
    try:
        with np.errstate(**errors):
            step(piece)
    finally:
        _splitting.active = False
