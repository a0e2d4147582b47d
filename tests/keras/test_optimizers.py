"""One step of each optimizer on a tiny model equals its Keras update rule computed by hand in numpy."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor


def linear_problem():
    """A linear model with MSE: its gradient has a closed form to compute by hand."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 3)).astype(np.float32)
    y = rng.normal(size=(6, 2)).astype(np.float32)
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    w0, b0 = rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=2).astype(np.float32)
    model.set_weights([w0, b0])
    return model, x, y, w0, b0


def mse_gradients(x, y, w, b):
    """d/dw, d/db of mean over batch and outputs of (x w + b - y)^2."""
    err = x @ w + b - y
    scale = 2.0 / err.size
    return scale * x.T @ err, scale * err.sum(axis=0)


def train_steps(optimizer, steps):
    model, x, y, w, b = linear_problem()
    model.compile(optimizer, "mse")
    for _ in range(steps):
        model.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)
    return model.get_weights(), x, y, w.astype(np.float64), b.astype(np.float64)


@pytest.mark.parametrize("momentum, nesterov", [(0.0, False), (0.9, False), (0.9, True)])
def test_sgd(momentum, nesterov):
    lr = 0.05
    (w, b), x, y, w_ref, b_ref = train_steps(keras.optimizers.SGD(lr, momentum=momentum, nesterov=nesterov), 3)
    velocity = [np.zeros_like(w_ref), np.zeros_like(b_ref)]
    params = [w_ref, b_ref]
    for _ in range(3):
        grads = mse_gradients(x, y, *params)
        for i, g in enumerate(grads):
            velocity[i] = momentum * velocity[i] - lr * g
            params[i] = params[i] + (momentum * velocity[i] - lr * g if nesterov else velocity[i])
    np.testing.assert_allclose(w, params[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, params[1], rtol=1e-5, atol=1e-6)


def test_adam():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-7
    (w, b), x, y, w_ref, b_ref = train_steps(keras.optimizers.Adam(lr), 3)
    params = [w_ref, b_ref]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, 4):
        grads = mse_gradients(x, y, *params)
        lr_t = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            params[i] = params[i] - lr_t * m[i] / (np.sqrt(v[i]) + eps)
    np.testing.assert_allclose(w, params[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, params[1], rtol=1e-5, atol=1e-6)


def test_rmsprop():
    lr, rho, eps = 0.01, 0.9, 1e-7
    (w, b), x, y, w_ref, b_ref = train_steps(keras.optimizers.RMSprop(lr), 3)
    params = [w_ref, b_ref]
    ms = [np.zeros_like(p) for p in params]  # TF2 Keras starts the mean square at zero
    for _ in range(3):
        grads = mse_gradients(x, y, *params)
        for i, g in enumerate(grads):
            ms[i] = rho * ms[i] + (1 - rho) * g * g
            params[i] = params[i] - lr * g / (np.sqrt(ms[i]) + eps)
    np.testing.assert_allclose(w, params[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, params[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("momentum, centered", [(0.0, False), (0.5, False), (0.0, True), (0.5, True)])
def test_rmsprop_variants_on_small_gradients(momentum, centered):
    """Gradients of 1e-4 make the mean square comparable to epsilon, so where TensorFlow puts epsilon
    (outside the square root without momentum, inside it with momentum) shows."""
    lr, rho, eps = 0.01, 0.9, 1e-7
    rng = np.random.default_rng(4)
    start = rng.normal(size=(3, 2))
    grads = [1e-4 * rng.normal(size=(3, 2)) for _ in range(3)]
    weight = Tensor(start.astype(np.float64))
    optimizer = keras.optimizers.RMSprop(lr, momentum=momentum, centered=centered)
    ms, mg, mom, reference = np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)), start.copy()
    for g in grads:
        optimizer.apply_gradients([(g, weight)])
        ms = rho * ms + (1 - rho) * g * g
        mg = rho * mg + (1 - rho) * g
        denominator = ms - mg * mg if centered else ms
        if momentum:
            mom = momentum * mom + lr * g / np.sqrt(denominator + eps)
            reference -= mom
        else:
            reference -= lr * g / (np.sqrt(denominator) + eps)
    np.testing.assert_allclose(weight.data, reference, rtol=1e-10)


def test_optimizer_state_is_per_weight_and_counts_iterations():
    optimizer = keras.optimizers.SGD(0.1, momentum=0.5)
    train_steps(optimizer, 2)
    assert optimizer.iterations == 2
    assert optimizer.slots_per_weight == 1 and len(optimizer._slots) == 2  # one velocity for kernel and bias
    assert keras.optimizers.Adam().slots_per_weight == 2 and keras.optimizers.SGD().slots_per_weight == 0


def test_an_optimizer_must_declare_its_cost_on_the_ipu():
    """No silent default: a subclass that does not say what it keeps and computes per weight is refused."""
    with pytest.raises(
        TypeError,
        match=r"Lion must declare slots_per_weight and update_flops_per_weight: "
        r"the IPU model counts",
    ):

        class Lion(keras.optimizers.Optimizer):
            def update(self, weight, grad):
                weight.data -= self.learning_rate * np.sign(grad)

    with pytest.raises(TypeError, match=r"Lion must declare update_flops_per_weight:"):

        class Lion(keras.optimizers.Optimizer):  # noqa: F811
            slots_per_weight = 1


@pytest.mark.parametrize(
    "optimizer, slots, flops",
    [
        (keras.optimizers.SGD(), 0, 2),
        (keras.optimizers.SGD(momentum=0.9), 1, 4),
        (keras.optimizers.SGD(momentum=0.9, nesterov=True), 1, 6),
        (keras.optimizers.Adam(), 2, 12),
        (keras.optimizers.RMSprop(), 1, 9),
        (keras.optimizers.RMSprop(momentum=0.5, centered=True), 3, 16),
    ],
)
def test_each_optimizer_declares_its_state_and_update_arithmetic(optimizer, slots, flops):
    assert (optimizer.slots_per_weight, optimizer.update_flops_per_weight) == (slots, flops)
    wrapped = keras.mixed_precision.LossScaleOptimizer(optimizer)
    assert (wrapped.slots_per_weight, wrapped.update_flops_per_weight) == (slots, flops)


def test_adagrad():
    """Keras 2.6 Adagrad: the accumulator starts at initial_accumulator_value (not zero), then
    accum += g * g and w -= lr * g / (sqrt(accum) + epsilon)."""
    lr, initial, eps = 0.05, 0.1, 1e-7
    (w, b), x, y, w_ref, b_ref = train_steps(keras.optimizers.Adagrad(lr), 3)
    params = [w_ref, b_ref]
    accumulators = [np.full_like(p, initial) for p in params]
    for _ in range(3):
        grads = mse_gradients(x, y, *params)
        for i, g in enumerate(grads):
            accumulators[i] = accumulators[i] + g * g
            params[i] = params[i] - lr * g / (np.sqrt(accumulators[i]) + eps)
    np.testing.assert_allclose(w, params[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b, params[1], rtol=1e-5, atol=1e-6)


def test_adagrad_by_name_with_keras_defaults_and_checks():
    model, *_ = linear_problem()
    model.compile("adagrad", "mse")
    optimizer = model.optimizer
    assert isinstance(optimizer, keras.optimizers.Adagrad)
    assert optimizer.get_config() == {
        "name": "Adagrad",
        "learning_rate": 0.001,
        "decay": 0.0,  # Keras 2.6 (legacy optimizers) writes it for every optimizer
        "initial_accumulator_value": 0.1,
        "epsilon": 1e-7,
    }
    assert (optimizer.slots_per_weight, optimizer.update_flops_per_weight) == (1, 7)
    with pytest.raises(ValueError, match=r"Adagrad: initial_accumulator_value must be non-negative, got -1"):
        keras.optimizers.Adagrad(initial_accumulator_value=-1)


def test_adagrad_state_survives_save_and_load(tmp_path):
    """The accumulators are saved with the model, so training continues as if never stopped."""
    optimizer = keras.optimizers.Adagrad(0.05, initial_accumulator_value=0.2)
    model, x, y, *_ = linear_problem()
    model.compile(optimizer, "mse")
    model.fit(x, y, batch_size=len(x), epochs=2, verbose=0, shuffle=False)
    model.save(tmp_path / "adagrad.keras")
    loaded = keras.models.load_model(tmp_path / "adagrad.keras")
    assert loaded.optimizer.get_config() == optimizer.get_config() and loaded.optimizer.iterations == 2
    for m in (model, loaded):
        m.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
