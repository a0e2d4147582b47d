"""Matrix products for the ops, split so that small ones never pay for BLAS threading.

OpenBLAS (numpy's BLAS) spreads a product of more than 2**18 multiply-adds over all its threads,
and its threads wait for each other at every block of the sum. A skinny product (few outputs and a
long sum, such as a first conv layer's kernel gradient: 9 x 43,264 times 43,264 x 32) does little
arithmetic between those waits; on a machine whose cores are busy with other work each wait can
take a scheduler time slice, and the product 100 to 1,000 times longer than on one thread. Splitting
such products into pieces below the threshold runs each piece on the calling thread. Large
products (where threads pay off) go to BLAS whole. Results differ from one product only by
float rounding (sums over pieces of the shared axis are added in another order).
"""
import numpy as np

from ..precision import half_product

SINGLE_THREAD_SIZE = 2**18  # OpenBLAS' default: products up to this many multiply-adds run on one thread
SPLIT_UP_TO = 2**25  # larger products are left whole: they have enough work for every thread


def matmul(a: np.ndarray, b: np.ndarray, kind: str = "matmul") -> np.ndarray:
    """``a @ b`` for 2-D ``a`` (m, k) and ``b`` (k, n), split into single-thread pieces when small; in fp16
    as the matrix units do it, with the partials type of ``kind`` ("matmul" or "conv")."""
    if a.dtype == np.float16 and b.dtype == np.float16:
        return half_product(a, b, kind)
    (m, k), n = a.shape, b.shape[1]
    size = m * k * n
    if size <= SINGLE_THREAD_SIZE or size > SPLIT_UP_TO:
        return a @ b
    if m >= k:  # split the rows of the result
        rows = max(1, SINGLE_THREAD_SIZE // (k * n))
        out = np.empty((m, n), dtype=np.result_type(a, b))
        for start in range(0, m, rows):
            np.matmul(a[start:start + rows], b, out=out[start:start + rows])
        return out
    depth = max(1, SINGLE_THREAD_SIZE // (m * n))  # split the sum
    out = a[:, :depth] @ b[:depth]
    for start in range(depth, k, depth):
        out += a[:, start:start + depth] @ b[start:start + depth]
    return out
