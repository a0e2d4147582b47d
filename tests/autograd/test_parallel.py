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
    "x_shape, k_shape, params",
    [
        ((7, 28, 28, 1), (3, 3, 1, 32), {}),  # the tutorial's first layer: patches copied kernel offset by offset
        ((5, 13, 13, 32), (3, 3, 32, 64), {}),  # its second: patches in one copy
        ((4, 9, 9, 3), (3, 3, 3, 4), {"strides": (2, 2), "padding": "same", "dilation": (1, 1)}),
        ((4, 11, 11, 2), (3, 3, 2, 5), {"dilation": (2, 2)}),
    ],
)
def test_a_convolution_and_relu_split_by_samples_give_the_bits_of_one_pass(monkeypatch, x_shape, k_shape, params):
    x, kernel = _special_values(x_shape, seed=2), _special_values(k_shape, seed=3) / 4
    bias = _special_values(k_shape[3:], seed=4)

    def run():
        tensors = [Tensor(a.copy(), requires_grad=True) for a in (x, kernel, bias)]
        with np.errstate(invalid="ignore", over="ignore"):  # infinities times zeros
            y = ops.Conv2DReLUOp.apply(*tensors, **params)
            y.backward(_special_values(y.array.shape, seed=5))
        return [y.array] + [t.grad for t in tensors]

    pieces = _whole_and_split(monkeypatch, run)
    assert len(pieces) == 6  # the patches and ReLU's gradient, three pieces each
