"""keras.mixed_precision as Keras has it: policies (global and per layer), fp32 variables for mixed,
fp16 numerics, and LossScaleOptimizer's static and dynamic loss scaling."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.keras import mixed_precision


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    mixed_precision.set_global_policy(None)


def test_mixed_float16_computes_in_fp16_and_keeps_fp32_variables():
    mixed_precision.set_global_policy("mixed_float16")
    layer = keras.layers.Dense(4)
    out = layer(np.ones((2, 3), np.float32))
    assert (layer.compute_dtype, layer.variable_dtype, layer.dtype) == ("float16", "float32", "float32")
    assert out.dtype == np.float16 and layer.kernel.dtype == np.float32
    assert repr(mixed_precision.global_policy()) == '<Policy "mixed_float16">'


def test_a_layers_dtype_overrides_the_global_policy():
    mixed_precision.set_global_policy("mixed_float16")
    head = keras.layers.Activation("softmax", dtype="float32")
    assert head(np.ones((1, 3), np.float16)).dtype == np.float32
    assert keras.layers.Dense(2, dtype="float16").variable_dtype == "float16"


def test_an_fp16_dense_layer_matches_float64_within_fp16_tolerance():
    mixed_precision.set_global_policy("mixed_float16")
    layer = keras.layers.Dense(16)
    x = np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32)
    got = layer(x).data.astype(np.float64)
    reference = x.astype(np.float64) @ layer.kernel.data.astype(np.float64)
    assert np.allclose(got, reference, rtol=1e-2, atol=1e-2)
    assert not np.allclose(got, reference, rtol=1e-6, atol=1e-6)


def test_unknown_policies_are_refused_with_the_valid_ones_named():
    with pytest.raises(ValueError, match="Cannot convert value 'float8'.*'mixed_float16'"):
        mixed_precision.Policy("float8")
    with pytest.raises(ValueError, match="not simulated.*'mixed_float16'"):
        mixed_precision.set_global_policy("mixed_bfloat16")


def test_compile_wraps_the_optimizer_of_an_fp16_model_in_a_loss_scale_optimizer():
    mixed_precision.set_global_policy("mixed_float16")
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    assert isinstance(model.optimizer, mixed_precision.LossScaleOptimizer)
    assert model.optimizer.loss_scale == 2.0**15 and model.optimizer.learning_rate == 0.1


def sgd_step(optimizer, grad, weight=1.0):
    w = keras.layers.Dense(1).add_weight("w", (1,), initializer="ones")
    w.data[:] = weight
    applied = optimizer.apply_gradients([(np.array([grad], np.float32), w)])
    return applied, float(w.data[0])


def test_dynamic_loss_scaling_skips_a_step_and_halves_on_overflow():
    optimizer = mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(1.0))
    applied, weight = sgd_step(optimizer, np.inf)
    assert not applied and weight == 1.0 and optimizer.loss_scale == 2.0**14
    applied, weight = sgd_step(optimizer, np.nan)
    assert not applied and optimizer.loss_scale == 2.0**13
    applied, weight = sgd_step(optimizer, 0.25)
    assert applied and weight == 0.75 and optimizer.loss_scale == 2.0**13


def test_a_skipped_step_still_counts_in_iterations_as_in_keras():
    """Keras' do_not_apply_fn increments the inner optimizer's iterations: a schedule does not stall."""
    optimizer = mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(1.0))
    sgd_step(optimizer, np.inf)
    sgd_step(optimizer, 0.25)
    assert optimizer.iterations == 2 and optimizer.inner_optimizer.iterations == 2


def test_dynamic_loss_scaling_doubles_after_the_growth_steps():
    optimizer = mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(0.1), initial_scale=8, dynamic_growth_steps=3)
    for _ in range(2):
        sgd_step(optimizer, 0.1)
    assert optimizer.loss_scale == 8 and optimizer.dynamic_counter == 2
    sgd_step(optimizer, 0.1)
    assert optimizer.loss_scale == 16 and optimizer.dynamic_counter == 0


def test_static_loss_scaling_keeps_its_scale_and_needs_one():
    optimizer = mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(1.0), dynamic=False, initial_scale=128)
    applied, _ = sgd_step(optimizer, np.inf)
    assert applied and optimizer.loss_scale == 128
    with pytest.raises(ValueError, match='"initial_scale" must be specified if "dynamic" is False'):
        mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(), dynamic=False)
    with pytest.raises(TypeError, match="inner_optimizer"):
        mixed_precision.LossScaleOptimizer("sgd")


def test_loss_scaling_keeps_gradients_that_underflow_in_fp16():
    """A tiny loss: its fp16 gradients underflow to zero unscaled; scaled by 2**15 and unscaled in fp32 they
    reach the fp32 variables intact."""
    mixed_precision.set_global_policy("mixed_float16")
    x = np.full((4, 8), 1e-3, np.float32)
    y = np.zeros((4, 1), np.float32)

    def kernel_gradient(optimizer):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(8,), kernel_initializer="ones")])
        model.compile(optimizer, keras.losses.MeanSquaredError())
        _, grads, _ = model.compute_gradients(x * 1e-2, y)
        return grads[0]

    plain = keras.optimizers.SGD()
    unscaled = kernel_gradient(mixed_precision.LossScaleOptimizer(plain, dynamic=False, initial_scale=1))
    scaled = kernel_gradient(mixed_precision.LossScaleOptimizer(plain, dynamic=False, initial_scale=2**15))
    exact = 2 * (8 * 1e-5) * 1e-5  # d/dw mean((sum w x)^2) with every x = 1e-5, w = 1
    assert np.all(unscaled == 0)
    assert scaled.dtype == np.float32 and np.allclose(scaled, exact, rtol=0.05)
