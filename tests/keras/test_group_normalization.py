"""GroupNormalization against tf-keras 2.21, and Graphcore's IPU GroupNormalization / InstanceNormalization.

The fixture ``golden/group_normalization.json`` was written by ``tools/make_keras_goldens.py`` (section
``group_normalization``): outputs and gradients of Keras' layer from seeded weights; its strided cases are
Keras' layer on the channels reordered so that each of Graphcore's strided groups (channel c in group
c % groups) is contiguous, the results put back in the original order."""

import json
import pathlib

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor
from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "group_normalization.json").read_text())
RTOL, ATOL = 1e-5, 1e-5


def _layer(case):
    if case["strided"]:  # Graphcore's, with Keras' initial gamma and beta (its own are random)
        return ipu_layers.GroupNormalization(**case["arguments"], beta_initializer="zeros", gamma_initializer="ones")
    return keras.layers.GroupNormalization(**case["arguments"])


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_group_normalization_output_and_gradients_match_keras(case):
    layer = _layer(case)
    x = Tensor(np.asarray(case["x"], np.float32), requires_grad=True)
    layer(x)  # builds it
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == (
        ["gamma", "beta"] if case["arguments"].get("center", True) else []
    )
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    y = layer(x, training=True)
    np.testing.assert_allclose(y.data, case["output"], rtol=RTOL, atol=ATOL)
    y.backward(np.asarray(case["upstream"], np.float32))
    np.testing.assert_allclose(x.grad, case["input_gradient"], rtol=RTOL, atol=ATOL, err_msg="input gradient")
    for weight, expected in zip(layer.trainable_weights, case["weight_gradients"], strict=True):
        np.testing.assert_allclose(weight.grad, expected, rtol=RTOL, atol=ATOL, err_msg=weight.name)


def test_strided_and_neighbouring_groups_differ():
    """The strided cases can fail: Keras' grouping of the same channels gives other numbers."""
    case = next(c for c in GOLDEN["cases"] if c["strided"] and c["arguments"]["groups"] == 2)
    layer = keras.layers.GroupNormalization(**case["arguments"])
    layer(np.asarray(case["x"], np.float32))
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    assert np.abs(layer(np.asarray(case["x"], np.float32)).data - np.asarray(case["output"])).max() > 0.1


@pytest.mark.parametrize(
    ("groups", "channels", "message"),
    [
        (8, 6, r"Number of groups \(8\) cannot be more than the number of channels \(6\)\."),
        (4, 6, r"Number of groups \(4\) must be a multiple of the number of channels \(6\)\."),
    ],
)
def test_groups_that_do_not_divide_the_channels_are_refused_with_keras_message(groups, channels, message):
    with pytest.raises(ValueError, match=message):
        keras.Sequential([keras.Input((3, channels)), keras.layers.GroupNormalization(groups)])


def test_a_channels_first_axis_is_refused_saying_what_to_use():
    with pytest.raises(ValueError, match=r"GroupNormalization: ipu-teach normalises the channels of the last axis"):
        ipu_layers.GroupNormalization(channels_axis=1)


def test_graphcores_layers_start_from_glorot_uniform_gamma_and_beta_and_instance_norm_takes_a_group_per_channel():
    keras.utils.set_random_seed(0)
    layer = ipu_layers.InstanceNormalization()
    layer(np.ones((2, 3, 4), np.float32))
    gamma, beta = layer.get_weights()
    assert not np.allclose(gamma, 1.0) and not np.allclose(beta, 0.0) and np.abs(gamma).max() <= np.sqrt(6 / 5)
    assert ipu_layers.GroupNorm is ipu_layers.GroupNormalization and ipu_layers.InstanceNorm is layer.__class__
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    instance = ipu_layers.InstanceNormalization(beta_initializer="zeros", gamma_initializer="ones")
    np.testing.assert_allclose(
        instance(x).data, (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-3), atol=1e-5
    )


def test_a_group_normalization_in_a_keras_file_loads(tmp_path):
    model = keras.Sequential([keras.Input((2, 4)), keras.layers.GroupNormalization(2, name="gn")])
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    x = np.random.default_rng(0).normal(size=(3, 2, 4)).astype(np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
