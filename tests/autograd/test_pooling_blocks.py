"""Max pooling a block of samples at a time (``pooling.CACHE_BLOCK``): the bits of one pass over every sample."""

import numpy as np
import pytest
from test_parallel import _max_pool, _special_values

from ipu_teach.autograd import Tensor, ops
from ipu_teach.autograd.ops import pooling


@pytest.mark.parametrize(
    "samples, sample_values, block, expected",
    [
        (slice(0, 10), 100, 300, [(0, 3), (3, 6), (6, 9), (9, 10)]),  # three samples a block, a shorter last one
        (slice(5, 10), 100, 1000, [(5, 10)]),  # a piece of the samples, one block
        (slice(2, 4), 500, 100, [(2, 3), (3, 4)]),  # a sample larger than a block: one a block
    ],
)
def test_blocks_cover_the_samples_in_order_within_the_block_size(monkeypatch, samples, sample_values, block, expected):
    monkeypatch.setattr(pooling, "CACHE_BLOCK", block)
    array = np.zeros((samples.stop, sample_values), np.float32)
    assert [(s.start, s.stop) for s in pooling.cache_blocks(samples, array)] == expected


@pytest.mark.parametrize(
    "shape, params",
    [
        ((9, 26, 26, 32), {"pool_size": (2, 2)}),  # the tutorial's first pooling
        ((5, 11, 11, 6), {"pool_size": (2, 2)}),  # an uncovered last row and column
        ((4, 9, 7, 3), {"pool_size": (3, 3), "padding": "same"}),  # padded, nine offsets
        ((6, 8, 8, 2), {"pool_size": (3, 3), "strides": (2, 2)}),  # overlapping windows (forward only in blocks)
    ],
)
def test_max_pooling_in_blocks_of_samples_gives_the_bits_of_one_pass(monkeypatch, shape, params):
    x = _special_values(shape, seed=sum(shape))
    grad = _special_values(ops.MaxPool2DOp.apply(Tensor(x), **params).array.shape, seed=1)
    monkeypatch.setattr(pooling, "CACHE_BLOCK", 2**40)
    whole = _max_pool(x, grad, params)
    sample = int(np.prod(shape[1:]))
    blocks = []
    cache_blocks = pooling.cache_blocks
    monkeypatch.setattr(pooling, "cache_blocks", lambda *a: blocks.append(cache_blocks(*a)) or blocks[-1])
    monkeypatch.setattr(pooling, "CACHE_BLOCK", 2 * sample)  # two samples a block (one, padded), the last one alone
    pieces = _max_pool(x, grad, params)
    assert len(blocks) == (2 if params.get("strides") is None else 1)  # the forward, and the backward that tiles
    assert all(len(b) >= shape[0] // 2 for b in blocks)
    for a, b in zip(whole, pieces, strict=True):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("batch", [0, 1])
@pytest.mark.parametrize("params", [{"pool_size": (2, 2)}, {"pool_size": (3, 3), "strides": (2, 2)}])
def test_max_pooling_in_blocks_takes_an_empty_batch_and_a_single_sample(batch, params):
    x = _special_values((batch, 6, 6, 3), seed=batch + 3)
    out = ops.MaxPool2DOp.apply(Tensor(x), **params).array
    grad = _special_values(out.shape, seed=7)
    forward, backward = _max_pool(x, grad, params)
    assert forward.shape == out.shape and backward.shape == x.shape
    assert batch or (forward.size == 0 and backward.size == 0)


@pytest.mark.parametrize("batch", [0, 1])
def test_pooling_through_a_relu_takes_an_empty_batch_and_a_single_sample(batch):
    x = Tensor(_special_values((batch, 6, 6, 2), seed=batch + 11), requires_grad=True)
    pooled = ops.max_pool2d(ops.relu(x), pool_size=(2, 2))  # the tape routes the pooling's gradient through ReLU
    with np.errstate(invalid="ignore"):  # an infinite gradient times a window's zero
        pooled.backward(np.ones(pooled.shape, np.float32))
    assert x.grad.shape == x.shape
    assert batch or x.grad.size == 0
