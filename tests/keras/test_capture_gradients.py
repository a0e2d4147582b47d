"""keras.ipu.layers.CaptureActivationGradients / CaptureUpstreamGradients (graphcore/keras
keras/ipu/layers/capture_upstream_gradients.py): the gradients at a layer's activation input (or output) reach an
optimizer that ``supports_captured_grads`` as ``captured_grads``, by tag; ALSOptimizer counts them."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.keras.ipu.layers import CaptureActivationGradients, CaptureUpstreamGradients
from ipu_teach.keras.ipu.optimizers import ALSOptimizer
from ipu_teach.tensorflow.import_map import TensorFlowImports


class RecordingSGD(keras.optimizers.SGD):
    """Graphcore's example optimizer (SGDCaptureOptimizer): it takes the captured gradients and keeps them."""

    supports_captured_grads = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = []

    def apply_gradients(self, grads_and_vars, captured_grads=None):
        self.seen.append(captured_grads)
        super().apply_gradients(grads_and_vars)


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)


def test_the_activation_input_gradient_reaches_the_optimizer_by_tag():
    """tanh(x W + b) with mean squared error: d loss / d z = 2 (y_pred - y) / (4 * 2) * (1 - y_pred ** 2)."""
    keras.utils.set_random_seed(0)
    x, y = _data()
    dense = keras.layers.Dense(2, activation="tanh", name="hidden")
    model = keras.Sequential([keras.Input((3,)), CaptureActivationGradients(dense)])
    optimizer = RecordingSGD(0.1)
    model.compile(optimizer, "mse")
    y_pred = model.predict(x, verbose=0)
    model.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    assert list(optimizer.seen[0]) == ["hidden_cag_activation"]
    expected = 2 * (y_pred - y) / y.size * (1 - y_pred**2)
    np.testing.assert_allclose(optimizer.seen[0]["hidden_cag_activation"], expected, rtol=1e-5, atol=1e-7)
    assert model.count_params() == 8 and len(model.trainable_weights) == 2  # the wrapped layer's weights


def test_the_upstream_gradient_is_the_layers_output_gradient_and_other_optimizers_get_none():
    keras.utils.set_random_seed(0)
    x, y = _data()
    model = keras.Sequential([keras.Input((3,)), CaptureUpstreamGradients(keras.layers.Dense(2), tag="out")])
    optimizer = RecordingSGD(0.1)
    model.compile(optimizer, "mse")
    y_pred = model.predict(x, verbose=0)
    model.fit(x, y, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(optimizer.seen[0]["out"], 2 * (y_pred - y) / y.size, rtol=1e-5, atol=1e-7)
    plain = keras.Sequential([keras.Input((3,)), CaptureUpstreamGradients(keras.layers.Dense(2))])
    plain.compile(keras.optimizers.SGD(0.1), "mse")
    plain.fit(x, y, batch_size=4, verbose=0)  # SGD takes no captured_grads: it is not given them
    assert plain.optimizer.iterations == 1


def test_als_with_captured_grads_only_counts_the_captured_gradients_alone():
    """float16, mean squared error against 100 from 0 over 8 x 4 values: each activation gradient is -6.25, the
    bias's their sum over the batch, -50. At a scale of 512 the bias's overflow 2**13 (25,600), the activations'
    do not (3,200): counting the weights' the scale halves, counting only the captured ones it doubles; at 4096
    the captured ones overflow too (25,600) and the scale halves."""
    x = np.full((8, 3), 0.01, np.float32)
    y = np.full((8, 4), 100.0, np.float32)
    scales = []
    for captured_only, initial in ((False, 512), (True, 512), (True, 4096)):
        dense = keras.layers.Dense(4, dtype="float16", kernel_initializer="zeros")
        model = keras.Sequential([keras.Input((3,)), CaptureActivationGradients(dense)])
        optimizer = ALSOptimizer(
            keras.optimizers.SGD(1e-6),
            initial_loss_scaling_factor=initial,
            update_frequency=1,
            captured_grads_only=captured_only,
        )
        model.compile(optimizer, "mse")
        model.fit(x, y, batch_size=8, verbose=0)
        scales.append(optimizer.loss_scaling_factor)
    assert scales == [256.0, 1024.0, 2048.0]


def test_a_layer_without_an_activation_is_refused_in_graphcores_words():
    with pytest.raises(ValueError, match="^Layer flat does not use an activation function so is not supported by "):
        CaptureActivationGradients(keras.layers.Flatten(name="flat"))
    with pytest.raises(ValueError, match="Expected an instance of a keras.engine.base_layer.Layer"):
        CaptureUpstreamGradients("dense")


def test_scripts_import_them_from_graphcores_keras():
    with TensorFlowImports():
        from keras.ipu.layers import CaptureActivationGradients as imported

        assert imported is CaptureActivationGradients


def test_captured_gradients_with_two_replicas_are_refused_as_not_simulated():
    from ipu_teach import ipu
    from ipu_teach.not_simulated import NotSimulatedError

    x, y = _data()
    with ipu.system.restored_afterwards():
        config = ipu.config.IPUConfig()
        config.auto_select_ipus = 2
        config.configure_ipu_system()
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = keras.Sequential([keras.Input((3,)), CaptureActivationGradients(keras.layers.Dense(2))])
            model.compile(RecordingSGD(0.1), "mse")
        with pytest.raises(NotSimulatedError, match="capture layers with replication or gradient accumulation"):
            model.fit(x, y, batch_size=2, verbose=0)
