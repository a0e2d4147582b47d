"""Matrix products for the ops: summed in float64 with portable numerics (``portable``: the same bits
on every BLAS kernel and thread count), and split so that small ones never pay for BLAS threading.

Why split. OpenBLAS spreads a product of more than 2**18 multiply-adds over all its threads, and
its threads wait for each other at every block of the sum. A skinny product (few outputs and a
long sum, such as a first conv layer's kernel gradient: 9 x 43,264 times 43,264 x 32) does little
arithmetic between those waits; on a machine whose cores are busy with other work each wait can
take a scheduler time slice, and the product 100 to 1,000 times longer than on one thread. Splitting
such products into pieces below the threshold runs each piece on the calling thread. Large
products (where threads pay off) go to BLAS whole, except those summed in float64 (portable numerics):
they are rounded to float32 a piece of rows at a time, so that the float64 result is never written out whole
(each output's float64 sum is BLAS' either way, but for the last bit of the few it computes in its edge tiles,
which the rounding to float32 hides, as it hides the differences between BLAS kernels: see ``portable``). Where
the pieces split is fixed by the shapes alone, never by the machine.
"""

import numpy as np

from ..precision import half_product
from . import portable

SINGLE_THREAD_SIZE = 2**18  # OpenBLAS' default: products up to this many multiply-adds run on one thread
SPLIT_UP_TO = 2**25  # larger products are left whole: they have enough work for every thread
WIDE_PIECE = 2**23  # except that one summed in float64 is rounded a piece of rows at a time (a megabyte or so)
FINISH_BLOCK = 2**15  # values of a result given its bias and ReLU together, in cache (128 KiB of float32)


def matmul(a: np.ndarray, b: np.ndarray, kind: str = "matmul", dtype=None, bias=None, relu_mask=None) -> np.ndarray:
    """``a @ b`` for 2-D ``a`` (m, k) and ``b`` (k, n) in ``dtype`` (default: the inputs' type; conv passes
    its own, as it gathers its patches in the compute type), plus ``bias`` (n,) if given, added in ``dtype``
    after the product is rounded to it (the bits of a separate ``+=``). Given ``relu_mask``, booleans of the
    result's shape, ReLU follows, ``max(y, 0)`` (the bits of a separate ReLU), and where the result is positive (the
    mask ReLU's gradient multiplies by) is written into it. In fp16 as the matrix units do it, with the partials
    type of ``kind`` ("matmul" or "conv"); otherwise summed in ``portable.compute_type``."""
    dtype = np.dtype(np.result_type(a, b) if dtype is None else dtype)
    if dtype == np.float16:
        out = half_product(a.astype(np.float16, copy=False), b.astype(np.float16, copy=False), kind)
        return _finish(out, bias, relu_mask)
    return _product(a, b, portable.compute_type(dtype), dtype, bias, relu_mask)


def _finish(out, bias, relu_mask, finisher=None):
    """``out += bias`` (if given), then, given ``relu_mask``, ``np.maximum(out, 0, out=out)`` and ``relu_mask[...] =
    out > 0``, a block of rows at a time: each block is read from memory once for all three, as a fused kernel
    would. ``finisher``: the ``_Finisher`` of a product finished piece by piece (made once for all its pieces)."""
    if bias is None and relu_mask is None:
        return out
    finisher = finisher or _Finisher(bias, relu_mask is not None, out.shape[1], len(out), out.dtype)
    for start in range(0, len(out), finisher.rows):
        block = out[start : start + finisher.rows]
        finisher.finish(block, None if relu_mask is None else relu_mask[start : start + finisher.rows])
    return out


class _Finisher:
    """The bias tiled to a block of rows, and a block of zeros: numpy adds two whole blocks, and takes their maximum,
    2-2.5x as fast as it broadcasts a row or a scalar over a block (0.35 -> 0.14 ms and 0.34 -> 0.16 ms for the
    tutorial's first layer, in cache), with the same bits (each value's sum and maximum are the broadcast's)."""

    def __init__(self, bias, relu, columns, rows, dtype):
        self.rows = min(max(1, FINISH_BLOCK // max(1, columns)), max(1, rows))
        self.bias = None if bias is None else np.tile(bias, (self.rows, 1))
        self.zeros = np.zeros((self.rows, columns), dtype) if relu else None

    def finish(self, block, relu_mask):
        """``block`` (at most ``rows`` rows) plus the bias, then ReLU, noting where it is positive in ``relu_mask``."""
        rows = len(block)
        if self.bias is not None:
            np.add(block, self.bias[:rows], out=block)
        if relu_mask is not None:
            np.maximum(block, self.zeros[:rows], out=block)
            np.greater(block, 0, out=relu_mask)


def _product(a: np.ndarray, b: np.ndarray, wide, dtype, bias, relu_mask=None) -> np.ndarray:
    """The product summed in ``wide``, rounded to ``dtype``, plus ``bias``, then ReLU if ``relu``. A product split by
    rows casts, rounds, adds the bias and applies ReLU a piece at a time, while the piece is in cache: with portable
    numerics no float64 copy of a whole operand or result is written to memory and read back, and neither the bias
    nor ReLU costs a pass of its own."""
    (m, k), n = a.shape, b.shape[1]
    size = m * k * n
    if SINGLE_THREAD_SIZE < size <= SPLIT_UP_TO:
        piece = SINGLE_THREAD_SIZE
    elif size > SPLIT_UP_TO and wide != dtype and m >= k:
        piece = WIDE_PIECE  # rounded to ``dtype`` a piece of rows at a time (see above)
    else:
        out = (a.astype(wide, copy=False) @ b.astype(wide, copy=False)).astype(dtype, copy=False)
        return _finish(out, bias, relu_mask)
    if m >= k:  # split the rows of the result
        return _by_rows(a, b, max(1, piece // (k * n)), wide, dtype, bias, relu_mask)
    depth = max(1, piece // (m * n))  # split the sum

    def part(start):  # the product of ``depth`` columns of a (rows of b) from ``start``, in ``wide``
        return a[:, start : start + depth].astype(wide, copy=False) @ b[start : start + depth].astype(wide, copy=False)

    out = part(0)
    for start in range(depth, k, depth):
        out += part(start)
    return _finish(out.astype(dtype, copy=False), bias, relu_mask)


def _by_rows(a, b, rows, wide, dtype, bias, relu_mask):
    """``a @ b (+ bias, ReLU)`` computed ``rows`` rows of the result at a time."""
    out = np.empty((a.shape[0], b.shape[1]), dtype=dtype)
    b = b.astype(wide, copy=False)
    scratch = None if wide == dtype else np.empty((rows, b.shape[1]), dtype=wide)
    finisher = _Finisher(bias, relu_mask is not None, b.shape[1], rows, dtype)
    for start in range(0, a.shape[0], rows):
        piece = out[start : start + rows]
        rows_of_a = a[start : start + rows].astype(wide, copy=False)
        if scratch is None:
            np.matmul(rows_of_a, b, out=piece)
        else:
            np.copyto(piece, np.matmul(rows_of_a, b, out=scratch[: len(piece)]), casting="same_kind")
        _finish(piece, bias, None if relu_mask is None else relu_mask[start : start + rows], finisher)
    return out
