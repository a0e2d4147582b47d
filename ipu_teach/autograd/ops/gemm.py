"""Matrix products for the ops: summed in float64 with portable numerics (``portable``: the same bits
on every BLAS kernel and thread count), and split so that small ones never pay for BLAS threading.

Why split. OpenBLAS spreads a product of more than 2**18 multiply-adds over all its threads, and
its threads wait for each other at every block of the sum. A skinny product (few outputs and a
long sum, such as a first conv layer's kernel gradient: 9 x 43,264 times 43,264 x 32) does little
arithmetic between those waits; on a machine whose cores are busy with other work each wait can
take a scheduler time slice, and the product 100 to 1,000 times longer than on one thread. Splitting
such products into pieces below the threshold runs each piece on the calling thread. Large
products (where threads pay off) go to BLAS whole. Where the pieces split is fixed by the shapes
alone, never by the machine.
"""

import numpy as np

from ..precision import half_product
from . import portable

SINGLE_THREAD_SIZE = 2**18  # OpenBLAS' default: products up to this many multiply-adds run on one thread
SPLIT_UP_TO = 2**25  # larger products are left whole: they have enough work for every thread


def matmul(a: np.ndarray, b: np.ndarray, kind: str = "matmul", dtype=None) -> np.ndarray:
    """``a @ b`` for 2-D ``a`` (m, k) and ``b`` (k, n) in ``dtype`` (default: the inputs' type; conv passes
    its own, as it gathers its patches in the compute type). In fp16 as the matrix units do it, with the
    partials type of ``kind`` ("matmul" or "conv"); otherwise summed in ``portable.compute_type``."""
    dtype = np.dtype(np.result_type(a, b) if dtype is None else dtype)
    if dtype == np.float16:
        return half_product(a.astype(np.float16, copy=False), b.astype(np.float16, copy=False), kind)
    wide = portable.compute_type(dtype)
    return _product(a.astype(wide, copy=False), b.astype(wide, copy=False)).astype(dtype, copy=False)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (m, k), n = a.shape, b.shape[1]
    size = m * k * n
    if size <= SINGLE_THREAD_SIZE or size > SPLIT_UP_TO:
        return a @ b
    if m >= k:  # split the rows of the result
        rows = max(1, SINGLE_THREAD_SIZE // (k * n))
        out = np.empty((m, n), dtype=np.result_type(a, b))
        for start in range(0, m, rows):
            np.matmul(a[start : start + rows], b, out=out[start : start + rows])
        return out
    depth = max(1, SINGLE_THREAD_SIZE // (m * n))  # split the sum
    out = a[:, :depth] @ b[:depth]
    for start in range(depth, k, depth):
        out += a[:, start : start + depth] @ b[start : start + depth]
    return out
