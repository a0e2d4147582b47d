"""keras.ipu.optimizers.ALSOptimizer (graphcore/keras keras/ipu/optimizers/als_optimizer.py): the loss scaling
factor follows Graphcore's rule from the fp16 gradients' overflow histogram, every step is applied, and training
with it equals training without it when nothing overflows."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.keras.ipu.optimizers import ALSOptimizer
from ipu_teach.not_simulated import NotSimulatedImportError
from ipu_teach.tensorflow.import_map import TensorFlowImports


def _weight(dtype="float16"):
    return keras.layers.Dense(1, dtype=dtype).add_weight("w", (2,), initializer="ones")


def _scales(optimizer, grads, weight):
    scales = []
    for g in grads:
        optimizer.apply_gradients([(np.array(g, np.float16), weight)])
        scales.append(optimizer.loss_scaling_factor)
    return scales


def test_the_scale_grows_every_update_period_while_nothing_overflows_and_stays_below_the_maximum():
    """Graphcore counts steps from 0 after each update: with update_frequency 2 an update every third step."""
    optimizer = ALSOptimizer(keras.optimizers.SGD(1e-3), update_frequency=2, max_loss_scaling_factor=8)
    assert _scales(optimizer, [[1e-3, 1e-3]] * 9, _weight()) == [1.0, 1.0, 2.0, 2.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    assert optimizer.update_counter == 0 and optimizer.previous_loss_scaling_factor == 2.0


def test_overflowing_gradients_shrink_the_scale_never_below_one_and_every_step_is_applied():
    weight = _weight()
    optimizer = ALSOptimizer(keras.optimizers.SGD(1.0), initial_loss_scaling_factor=4, update_frequency=1)
    assert _scales(optimizer, [[9000.0, 0.0], [0.0, 9000.0], [np.inf, 0.0]], weight) == [2.0, 1.0, 1.0]
    assert np.isinf(weight.data).any()  # applied anyway: ALS does not skip a step, unlike LossScaleOptimizer
    assert optimizer.iterations == 3


def test_only_float16_gradients_are_counted():
    optimizer = ALSOptimizer(keras.optimizers.SGD(1e-3), update_frequency=1)
    optimizer.apply_gradients([(np.array([1e6, 1e6], np.float32), _weight("float32"))])
    assert optimizer.loss_scaling_factor == 2.0  # no fp16 gradient: no overflow seen (0/0 is not above the threshold)


def test_fit_with_it_equals_fit_without_it_when_nothing_overflows():
    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    y = keras.utils.to_categorical((x[:, 0] > 0).astype(int), 2)
    weights = []
    for optimizer in (keras.optimizers.SGD(0.1), ALSOptimizer(keras.optimizers.SGD(0.1), update_frequency=1)):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
        model.compile(optimizer, "categorical_crossentropy")
        model.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
        weights.append(model.get_weights())
    assert optimizer.loss_scaling_factor == 256.0  # 8 steps, each an update, each doubling it
    for a, b in zip(*weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"increase_factor": 3}, "increase_factor must be a power of two"),
        ({"update_frequency": 0}, "update_frequency must be nonzero and positive"),
        ({"ratio_threshold": 1.0}, "ratio_threshold must be greater than zero and less than one"),
        ({"initial_loss_scaling_factor": 32768}, "initial_loss_scaling_factor must be less than max_loss_scaling"),
        ({"initial_loss_scaling_factor": 16384}, "initial_loss_scaling_factor x increase_factor must be less than"),
    ],
)
def test_graphcores_refusals(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ALSOptimizer(keras.optimizers.SGD(), **kwargs)


def test_scripts_import_it_from_graphcores_keras_and_the_rest_is_not_simulated():
    with TensorFlowImports():
        from keras.ipu.optimizers import ALSOptimizer as imported

        assert imported is ALSOptimizer
        with pytest.raises(NotSimulatedImportError, match="^keras.ipu.optimizers.ALSOptimizerSGD is not simulated"):
            exec("from keras.ipu.optimizers import ALSOptimizerSGD", {})
