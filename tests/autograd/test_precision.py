"""fp16 arithmetic as the IPU does it: products against a float64 reference, the partials type, and
stochastic rounding (unbiased, and keeping updates that round-to-nearest loses)."""

import numpy as np
import pytest

from ipu_teach.autograd import Tensor, ops, precision

FP16_EPS = 2.0**-10  # spacing of fp16 numbers in [1, 2)


def test_an_fp16_product_matches_float64_within_fp16_rounding():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(32, 256)), rng.normal(size=(256, 16))
    exact = a @ b
    got = ops.matmul(Tensor(a.astype(np.float16)), Tensor(b.astype(np.float16))).data
    assert got.dtype == np.float16
    # inputs rounded (relative 2^-11 each) and one final rounding: error ~ sqrt(depth) * eps * |a||b|
    scale = np.abs(a) @ np.abs(b)
    assert np.all(np.abs(got - exact) <= 2 * FP16_EPS * scale)
    assert not np.allclose(got, exact, rtol=1e-6, atol=1e-6)  # it really is fp16


def test_half_partials_accumulate_error_that_float_partials_do_not():
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, size=(64, 4096)).astype(np.float16)
    b = rng.uniform(0, 1, size=(4096, 8)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    with precision.ipu_numerics(matmul_partials="float"):
        float_error = np.abs(ops.matmul(Tensor(a), Tensor(b)).data - exact).mean()
    with precision.ipu_numerics(matmul_partials="half"):
        half_error = np.abs(ops.matmul(Tensor(a), Tensor(b)).data - exact).mean()
    assert half_error > 3 * float_error
    assert half_error < 0.01 * exact.mean()  # worse, but still fp16-sized


def test_convolutions_follow_their_own_partials_type():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, size=(2, 12, 12, 64)).astype(np.float16)
    k = rng.uniform(0, 1, size=(3, 3, 64, 8)).astype(np.float16)
    bias = np.zeros(8, np.float16)
    with precision.ipu_numerics(matmul_partials="half", conv_partials="float"):
        as_float = ops.Conv2DOp.apply(x, k, bias).data
    with precision.ipu_numerics(conv_partials="half"):
        as_half = ops.Conv2DOp.apply(x, k, bias).data
    assert not np.array_equal(as_float, as_half)


def test_stochastic_rounding_is_unbiased():
    rng = np.random.default_rng(3)
    for value in (1.0 + 0.3 * FP16_EPS, 0.1, -3.14159, 1e-6):
        rounded = precision.stochastic_round(np.full(200_000, value), rng).astype(np.float64)
        below, above = rounded.min(), rounded.max()
        assert below <= value <= above and len(np.unique(rounded)) == 2  # only the two neighbours
        assert abs(rounded.mean() - value) < 4 * (above - below) / np.sqrt(len(rounded))


def test_exact_values_and_overflow_are_not_randomised():
    rng = np.random.default_rng(4)
    assert np.array_equal(precision.stochastic_round(np.full(100, 0.5), rng), np.full(100, 0.5, np.float16))
    assert np.isinf(precision.stochastic_round(np.array([1e6]), rng)).all()


def test_stochastic_rounding_keeps_the_update_that_round_to_nearest_loses():
    weights = np.ones(100_000, np.float16)
    update = 1e-4  # under half the gap below 1.0 (2^-11): round-to-nearest gives 1.0 back
    nearest = weights.copy()
    precision.write(nearest, nearest.astype(np.float32) - update)
    assert np.all(nearest == 1.0)
    stochastic = weights.copy()
    with precision.ipu_numerics(rounding_rng=np.random.default_rng(5)):
        precision.write(stochastic, stochastic.astype(np.float32) - update)
    assert np.mean(1.0 - stochastic.astype(np.float64)) == pytest.approx(update, rel=0.05)


def test_stochastic_rounding_is_reproducible_from_its_seed():
    values = np.linspace(0.1, 0.2, 1000)
    first = precision.stochastic_round(values, np.random.default_rng(9))
    again = precision.stochastic_round(values, np.random.default_rng(9))
    other = precision.stochastic_round(values, np.random.default_rng(10))
    assert np.array_equal(first, again) and not np.array_equal(first, other)


def test_autocast_casts_inputs_and_sends_fp32_gradients_to_fp32_variables():
    w = Tensor(np.full((3, 2), 0.5, np.float32), requires_grad=True)
    x = Tensor(np.ones((4, 3), np.float32))
    with precision.autocast("float16"):
        y = ops.mul(ops.matmul(x, w), 2.0)
    assert y.dtype == np.float16
    y.sum().backward()
    assert w.grad.dtype == np.float32 and np.array_equal(w.grad, np.full((3, 2), 8.0, np.float32))


def test_a_bad_partials_type_names_the_option():
    with pytest.raises(ValueError, match=r"partialsType must be 'float' or 'half'.*'float16'"):
        precision.check_partials_type("float16", "IPUConfig.matmuls.poplar_options['partialsType']")
