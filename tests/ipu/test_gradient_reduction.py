"""The gradient reduction methods as Graphcore's Keras has them: names, default, errors and arithmetic."""

import numpy as np
import pytest
from ipu_test_helpers import build

from ipu_teach import ipu
from ipu_teach.ipu.gradient_accumulation import accumulate, cross_replica_sum

Method = ipu.optimizers.GradientAccumulationReductionMethod


@pytest.mark.parametrize(
    "given, expected",
    [
        ("sum", Method.SUM),
        ("SUM", Method.SUM),
        ("Mean", Method.MEAN),
        ("running_mean", Method.RUNNING_MEAN),
        ("RUNNING_MEAN", Method.RUNNING_MEAN),
        (Method.MEAN, Method.MEAN),
    ],
)
def test_methods_are_named_by_the_enum_or_a_string_in_any_case(given, expected):
    assert Method.parse(given) is expected


@pytest.mark.parametrize("given", ["average", "running-mean", "", 1, None])
def test_anything_else_is_refused_with_the_valid_values(given):
    with pytest.raises(ValueError) as error:
        Method.parse(given)
    assert str(error.value).startswith(
        f"gradient_accumulation_reduction_method={given!r}: cannot parse it as one "
        "of GradientAccumulationReductionMethod. Valid values are: SUM, MEAN, "
        "RUNNING_MEAN"
    )


def test_the_enum_is_where_graphcore_keeps_it():
    assert ipu.gradient_accumulation.GradientAccumulationReductionMethod is Method
    assert [m.value for m in Method] == [0, 1, 2]  # the values Graphcore saves in a model's config


def _options(model):
    return ipu.keras_extensions.options_of(model).gradient_accumulation_reduction_method


def test_sum_is_the_default_and_the_last_setter_called_wins():
    model = build()
    model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=2)
    assert _options(model) is Method.SUM
    model.set_gradient_accumulation_options(gradient_accumulation_reduction_method="mean")
    assert _options(model) is Method.MEAN
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)  # its default is 'sum' too
    assert _options(model) is Method.SUM
    model.set_pipelining_options(gradient_accumulation_reduction_method=Method.RUNNING_MEAN)
    assert _options(model) is Method.RUNNING_MEAN


@pytest.mark.parametrize("setter", ["set_gradient_accumulation_options", "set_pipelining_options"])
def test_both_setters_refuse_an_unknown_method_and_keep_the_old_one(setter):
    model = build()
    model.set_gradient_accumulation_options(gradient_accumulation_reduction_method="mean")
    with pytest.raises(ValueError, match="gradient_accumulation_reduction_method='avg': cannot parse"):
        getattr(model, setter)(gradient_accumulation_steps_per_replica=2, gradient_accumulation_reduction_method="avg")
    assert _options(model) is Method.MEAN


def _micro_batches(count=5, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=4).astype(np.float32)] for _ in range(count)]


def test_sum_adds_the_micro_batches_in_order():
    grads = _micro_batches()
    expected = [grads[0][i] for i in range(2)]
    for g in grads[1:]:
        expected = [e + gi for e, gi in zip(expected, g)]
    for got, want in zip(accumulate(grads, Method.SUM), expected, strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float32


def test_mean_scales_each_gradient_by_one_over_k_in_float32_before_adding_it():
    grads = _micro_batches()
    scale = np.float32(1) / np.float32(5)
    expected = [grads[0][i] * scale for i in range(2)]
    for g in grads[1:]:
        expected = [e + gi * scale for e, gi in zip(expected, g)]
    for got, want in zip(accumulate(grads, Method.MEAN), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def test_running_mean_keeps_acc_n_over_n_plus_1_plus_grad_over_n_plus_1():
    grads = _micro_batches()
    acc = [np.zeros_like(g) for g in grads[0]]
    for n, g in enumerate(grads):
        inverse = np.float32(1) / np.float32(n + 1)
        acc = [a * (np.float32(n) * inverse) + gi * inverse for a, gi in zip(acc, g)]
    running = accumulate(grads, Method.RUNNING_MEAN)
    for got, want, mean in zip(running, acc, accumulate(grads, Method.MEAN), strict=True):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_allclose(got, mean, rtol=1e-5, atol=1e-6)  # the same mean, rounded differently


def test_the_replicas_gradients_are_summed_not_averaged():
    replicas = [accumulate(_micro_batches(2, seed), Method.MEAN) for seed in range(3)]
    total = cross_replica_sum(replicas)
    for i, got in enumerate(total):
        np.testing.assert_array_equal(got, replicas[0][i] + replicas[1][i] + replicas[2][i])
