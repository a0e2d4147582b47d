"""BatchNormalization's moving statistics with replicas end where the CPU with the global batch ends."""

import functools

import numpy as np
import pytest
from ipu_test_helpers import configure, data

import ipu_teach.keras as keras
from ipu_teach import ipu


def bn_model_of(sample_shape):
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=sample_shape)
    x = keras.layers.Flatten()(keras.layers.BatchNormalization(momentum=0.5)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(x))
    model.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy")
    return model


@pytest.mark.parametrize("sample_shape", [(6,), (1, 2, 3)], ids=["2-D", "4-D (fused: Bessel's correction)"])
def test_moving_statistics_with_replicas_equal_the_cpu_at_the_global_batch(sample_shape):
    """The 4-D case corrects the pooled variance for the global batch's count, not a replica's."""
    x, y = data(n=64)
    x = (x * np.linspace(0.5, 3, 6, dtype=np.float32) + 1).reshape((64,) + sample_shape)
    bn_model = functools.partial(bn_model_of, sample_shape)
    cpu = bn_model()
    cpu.fit(x, y, batch_size=32, epochs=1, shuffle=False, verbose=0)
    configure(num_ipus=2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        replicated = bn_model()
    replicated.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    cpu_stats, ipu_stats = cpu.layers[1].get_weights()[2:], replicated.layers[1].get_weights()[2:]
    for a, b in zip(cpu_stats, ipu_stats):
        np.testing.assert_allclose(b, a, rtol=1e-5)
    assert not np.allclose(cpu_stats[0], 0.5 * np.float32(0)) and not np.allclose(cpu_stats[1], 1)
