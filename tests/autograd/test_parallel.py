"""Element-wise passes split by samples over threads (``ops.parallel``) give the bits of one pass over every sample."""

import os
import threading
import time

import numpy as np
import pytest

from ipu_teach.autograd import Tensor, ops
from ipu_teach.autograd.ops import parallel


@pytest.mark.parametrize(
    "environ, threads",
    [
        ({"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "3"}, 2),  # OpenBLAS' own setting first
        ({"OMP_NUM_THREADS": "3,1"}, 3),  # nested levels: the outer one
        ({"OPENBLAS_NUM_THREADS": "16"}, parallel.MAX_THREADS),
        ({"OPENBLAS_NUM_THREADS": "1"}, 1),
    ],
)
def test_the_thread_count_is_the_one_the_user_gave_blas(environ, threads):
    assert parallel.threads_from_environment(environ) == threads


@pytest.mark.parametrize("environ", [{}, {"OPENBLAS_NUM_THREADS": "0"}, {"OMP_NUM_THREADS": "many"}])
def test_without_a_usable_setting_the_thread_count_is_the_cores_this_process_may_use(environ):
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert parallel.threads_from_environment(environ) == max(1, min(cores, parallel.MAX_THREADS))


@pytest.mark.parametrize("samples, threads", [(64, 2), (7, 3), (2, 4), (1, 2)])
def test_the_pieces_cover_every_sample_once_in_order(samples, threads):
    pieces = parallel.sample_pieces(samples, threads)
    assert len(pieces) == min(samples, threads)
    assert [i for piece in pieces for i in range(samples)[piece]] == list(range(samples))
    assert max(p.stop - p.start for p in pieces) - min(p.stop - p.start for p in pieces) <= 1


def _calls(samples, values):
    calls = []
    parallel.for_samples(lambda s: calls.append((s, threading.get_ident())), samples, values)
    return calls


def test_a_large_pass_is_split_over_the_threads_and_a_small_one_is_not(monkeypatch):
    monkeypatch.setattr(parallel, "THREADS", 2)
    split = _calls(10, parallel.SPLIT_ABOVE + 1)
    assert sorted((s.start, s.stop) for s, _ in split) == [(0, 5), (5, 10)]
    assert len({thread for _, thread in split}) == 2
    assert _calls(10, parallel.SPLIT_ABOVE) == [(slice(0, 10), threading.get_ident())]
    monkeypatch.setattr(parallel, "THREADS", 1)
    assert _calls(10, parallel.SPLIT_ABOVE + 1) == [(slice(0, 10), threading.get_ident())]


def test_a_pieces_error_is_raised_after_every_piece_is_done(monkeypatch):
    monkeypatch.setattr(parallel, "THREADS", 3)
    done = []

    def step(s):
        if s.start == 4:
            raise ValueError("bad piece")
        if s.start == 8:
            time.sleep(0.2)  # still working when the bad piece has raised: the error must wait for it
        done.append(s.start)

    with pytest.raises(ValueError, match="bad piece"):
        parallel.for_samples(step, 12, parallel.SPLIT_ABOVE + 1)
    assert sorted(done) == [0, 8]


def test_a_pieces_own_passes_are_not_split_again(monkeypatch):
    monkeypatch.setattr(parallel, "THREADS", 2)
    inner = []
    parallel.for_samples(lambda s: inner.append(_calls(4, parallel.SPLIT_ABOVE + 1)), 2, parallel.SPLIT_ABOVE + 1)
    assert [len(calls) for calls in inner] == [1, 1]


def test_every_piece_keeps_the_callers_floating_point_error_handling(monkeypatch):
    monkeypatch.setattr(parallel, "THREADS", 2)
    zeros = np.zeros(8, np.float32)
    raised = []

    def step(s):
        try:
            np.divide(zeros[s], zeros[s])
        except FloatingPointError:
            raised.append(s.start)

    with np.errstate(invalid="raise"):
        parallel.for_samples(step, 8, parallel.SPLIT_ABOVE + 1)
    assert sorted(raised) == [0, 4]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_makes_its_own_pool(monkeypatch):
    monkeypatch.setattr(parallel, "THREADS", 2)
    assert len(_calls(4, parallel.SPLIT_ABOVE + 1)) == 2  # the parent's pool exists
    child = os.fork()
    if child == 0:  # the child: its parent's threads are not copied; a split must still finish
        ok = False
        try:
            ok = len(_calls(4, parallel.SPLIT_ABOVE + 1)) == 2 and parallel._pool[1] is not None
        finally:
            os._exit(0 if ok else 1)  # never back into the parent's pytest session
    _, status = os.waitpid(child, 0)
    assert os.WEXITSTATUS(status) == 0


def _special_values(shape, seed):
    """Random values with ties, NaN of either sign, infinities, signed zeros and subnormals scattered through them."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 4, size=shape).astype(np.float32)  # many ties
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45], np.float32)
    where = rng.random(shape) < 0.05
    x[where] = rng.choice(specials, size=int(where.sum()))
    return x


def _max_pool(x, grad, params):
    tensor = Tensor(x.copy(), requires_grad=True)
    y = ops.MaxPool2DOp.apply(tensor, **params)
    with np.errstate(invalid="ignore"):  # an infinite gradient times a window's zero
        y.backward(grad)
    return y.array, tensor.grad


def _whole_and_split(monkeypatch, run):
    """``run()``'s arrays on one thread, then split into three pieces wherever it can be, and the pieces run."""
    monkeypatch.setattr(parallel, "THREADS", 1)
    whole = run()
    pieces = []
    run_piece = parallel._run_piece
    monkeypatch.setattr(
        parallel, "_run_piece", lambda step, piece, errors: (pieces.append(piece), run_piece(step, piece, errors))
    )
    monkeypatch.setattr(parallel, "THREADS", 3)
    monkeypatch.setattr(parallel, "SPLIT_ABOVE", 0)
    split = run()
    for a, b in zip(whole, split, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return pieces


@pytest.mark.parametrize(
    "shape, params",
    [
        ((9, 26, 26, 32), {"pool_size": (2, 2)}),  # the tutorial's first pooling, odd samples
        ((5, 11, 11, 6), {"pool_size": (2, 2)}),  # an uncovered last row and column
        ((4, 9, 7, 3), {"pool_size": (3, 3), "padding": "same"}),  # padded, nine offsets
        ((6, 8, 8, 2), {"pool_size": (3, 3), "strides": (2, 2)}),  # overlapping windows
    ],
)
def test_max_pooling_split_by_samples_gives_the_bits_of_one_pass(monkeypatch, shape, params):
    x = _special_values(shape, seed=sum(shape))
    grad = _special_values(ops.MaxPool2DOp.apply(Tensor(x), **params).array.shape, seed=1)
    pieces = _whole_and_split(monkeypatch, lambda: _max_pool(x, grad, params))
    tiled = params.get("strides", params["pool_size"]) == params["pool_size"]
    assert len(pieces) == (6 if tiled else 3)  # three pieces each for the forward and (windows that tile) backward


@pytest.mark.parametrize(
    "x_shape, k_shape, params, pieces",
    [
        # the tutorial's first layer: patches copied kernel offset by offset; its three products are split into
        # pieces (gemm), so five passes of three pieces: the patches, the product, ReLU's gradient, the kernel and
        # input gradients' products (the scatter, 42,588 values, is one block)
        ((7, 28, 28, 1), (3, 3, 1, 32), {}, 15),
        ((5, 13, 13, 32), (3, 3, 32, 64), {}, 17),  # its second: the same, and the scatter's two blocks on two threads
        ((4, 9, 9, 3), (3, 3, 3, 4), {"strides": (2, 2), "padding": "same", "dilation": (1, 1)}, 6),  # small products
        ((4, 11, 11, 2), (3, 3, 2, 5), {"dilation": (2, 2)}, 6),
    ],
)
def test_a_convolution_and_relu_split_by_samples_give_the_bits_of_one_pass(
    monkeypatch, x_shape, k_shape, params, pieces
):
    x, kernel = _special_values(x_shape, seed=2), _special_values(k_shape, seed=3) / 4
    bias = _special_values(k_shape[3:], seed=4)

    def run():
        tensors = [Tensor(a.copy(), requires_grad=True) for a in (x, kernel, bias)]
        with np.errstate(invalid="ignore", over="ignore"):  # infinities times zeros
            y = ops.Conv2DReLUOp.apply(*tensors, **params)
            y.backward(_special_values(y.array.shape, seed=5))
        return [y.array] + [t.grad for t in tensors]

    assert len(_whole_and_split(monkeypatch, run)) == pieces  # the patches and ReLU's gradient: three pieces each


THIRDS_OF_5 = [(0, 1), (1, 3), (3, 5)]  # 5 pieces of work shared by 3 threads


@pytest.mark.parametrize("portable", [False, True], ids=["float32", "portable"])
@pytest.mark.parametrize(
    "a_shape, b_shape, float32_pieces, portable_pieces",
    [
        # a first convolution's product: 910 rows a piece, each finished (bias, ReLU) as it is computed
        ((4000, 9), (9, 32), THIRDS_OF_5, THIRDS_OF_5),
        ((9, 4000), (4000, 32), THIRDS_OF_5, THIRDS_OF_5),  # its kernel gradient: 910 terms a piece, added in order
        # 100 pieces of the sum whose results would exceed PARTIALS_UP_TO: summed as they come; then finished in 4
        # blocks of 4 rows (128 KiB)
        ((16, 200), (200, 8192), [(0, 1), (1, 2), (2, 4)], [(0, 1), (1, 2), (2, 4)]),
        # a second convolution's product: whole, then finished in 16 blocks of 512 rows; summed in float64, 18
        # pieces of 455 rows (2**23 multiply-adds) that BLAS spreads over its own threads: one after another
        ((7744, 288), (288, 64), [(0, 5), (5, 10), (10, 16)], []),
    ],
)
def test_a_split_products_pieces_run_on_the_threads_with_the_bits_of_one(
    monkeypatch, portable, a_shape, b_shape, float32_pieces, portable_pieces
):
    """A product cut into pieces (``gemm``) computes them at once on the threads, and a product's bias and ReLU are
    applied a block of rows at a time on the threads: each piece is the same BLAS call, a split sum's pieces are added
    in the same order, and each block gets the same operations, so every bit is one thread's (NaN, infinities, signed
    zeros)."""
    from ipu_teach import autograd
    from ipu_teach.autograd.ops import gemm

    a, b = _special_values(a_shape, seed=6), _special_values(b_shape, seed=7)
    bias = _special_values(b_shape[1:], seed=8)
    was = autograd.portable_numerics()
    autograd.set_portable_numerics(portable)
    try:

        def run():
            mask = np.empty((a_shape[0], b_shape[1]), bool)
            with np.errstate(invalid="ignore", over="ignore"):
                return gemm.matmul(a, b, "conv", dtype=np.float32, bias=bias, relu_mask=mask), mask

        pieces = _whole_and_split(monkeypatch, run)
    finally:
        autograd.set_portable_numerics(was)
    assert [(s.start, s.stop) for s in pieces] == (portable_pieces if portable else float32_pieces)


@pytest.mark.parametrize("channels", [1, 5, 32])  # one and five channels: NaN's sign flipped by a split by samples
def test_the_input_gradients_scatter_gives_the_same_bits_on_any_thread_count(monkeypatch, channels):
    """``col2im`` scatters in blocks of samples fixed by the shapes, which the threads share: with NaN of both signs and
    infinities among the terms (where numpy's choice between two NaNs depends on the shapes it adds), every bit is the
    same at one thread and at three."""
    monkeypatch.setattr(ops.conv, "SCATTER_BLOCK_VALUES", 1000)
    dcols = _special_values((8, 9, 9, 3, 5, channels), seed=channels)
    geometry = ((8, 11, 13, channels), ((1, 0), (0, 2)), (9, 9), (1, 1), (1, 1))

    def run():
        with np.errstate(invalid="ignore"):
            return [ops.conv.col2im(dcols, geometry, np.float32)]

    pieces = _whole_and_split(monkeypatch, run)
    assert [(s.start, s.stop) for s in pieces] == [(0, 1), (1, 2), (2, 4)]  # 4 blocks of 2 samples, 3 threads


def test_the_input_gradients_scatter_sums_every_windows_terms():
    """Block by block, the scatter still adds every window's values where they came from (a padded, strided case)."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(6, 7, 8, 3)).astype(np.float32)
    cols, geometry = ops.conv.im2col(x, (3, 2), (2, 1), "same")
    dcols = rng.normal(size=cols.shape).astype(np.float32)
    expected = np.zeros(geometry[0], np.float64)
    for n, oh, ow, i, j in np.ndindex(cols.shape[:5]):
        expected[n, 2 * oh + i, ow + j] += dcols[n, oh, ow, i, j]  # a window's pixel: its 3 channels
    got = ops.conv.col2im(dcols, geometry, np.float32)
    np.testing.assert_allclose(got, ops.conv.crop_nhwc(expected, geometry[1]), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows, shared", [(2000, False), (16000, True)])
def test_a_product_is_shared_by_the_threads_only_where_its_work_pays_for_the_hand_over(monkeypatch, rows, shared):
    """A split product's multiply-adds count a quarter of a value each (``gemm.MULTIPLY_ADDS_PER_VALUE``): 576,000 of
    them (3 pieces) stay on this thread, 4.6 million (18 pieces) go to the pool (above ``SPLIT_ABOVE``, 2**18)."""
    from ipu_teach.autograd.ops import gemm

    monkeypatch.setattr(parallel, "THREADS", 2)
    ran = []
    run_piece = parallel._run_piece
    monkeypatch.setattr(
        parallel, "_run_piece", lambda step, piece, errors: (ran.append(piece), run_piece(step, piece, errors))
    )
    a, b = np.ones((rows, 9), np.float32), np.ones((9, 32), np.float32)
    assert (gemm.matmul(a, b) == 9).all()
    assert len(ran) == (2 if shared else 0)
