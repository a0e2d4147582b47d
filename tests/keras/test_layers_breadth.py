"""The Keras layers a porter meets (activations with options, dilated, transposed, depthwise and separable
convolutions, upsampling, cropping, rescaling, normalization) against real tf-keras: the same inputs and
weights give the same outputs and gradients to float32 precision.

The fixture ``golden/layers_breadth.json`` was written by ``tools/make_keras_goldens.py`` (section
``layers_breadth``) with TensorFlow and tf-keras in a separate environment; these tests need neither.
"""

import json
import pathlib

import numpy as np
import pytest
from keras_helpers import single_ipu_scope

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "layers_breadth.json").read_text())
RTOL, ATOL = 1e-5, 1e-5


def _arguments(arguments):
    """JSON lists back to the tuples Keras was given for sizes (kernel sizes, strides, cropping)."""
    as_given = ("shared_axes", "mean", "variance")  # lists in Keras too
    return {
        k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) and k not in as_given else v
        for k, v in arguments.items()
    }


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_layer_output_and_gradients_match_keras(case):
    layer = getattr(keras.layers, case["class"])(**_arguments(case["arguments"]))
    x = Tensor(np.asarray(case["x"], np.float32), requires_grad=True)
    layer(x)  # builds it
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == case["weight_names"]
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    y = layer(x, training=True)
    np.testing.assert_allclose(y.data, case["output"], rtol=RTOL, atol=ATOL)
    y.backward(np.asarray(case["upstream"], np.float32))
    np.testing.assert_allclose(x.grad, case["input_gradient"], rtol=RTOL, atol=ATOL, err_msg="input gradient")
    assert len(layer.trainable_weights) == len(case["weight_gradients"])
    for weight, expected in zip(layer.trainable_weights, case["weight_gradients"]):
        np.testing.assert_allclose(weight.grad, expected, rtol=RTOL, atol=ATOL, err_msg=weight.name)


@pytest.mark.parametrize("case", GOLDEN["normalization_adapt"], ids=lambda case: f"axis={case['axis']}")
def test_normalization_adapt_learns_keras_statistics(case):
    axis = tuple(case["axis"]) if isinstance(case["axis"], list) else case["axis"]
    layer = keras.layers.Normalization(axis=axis)
    layer.adapt(np.asarray(case["data"], np.float32))
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == case["weight_names"]
    for weight, expected in zip(layer.get_weights(), case["weights"]):
        np.testing.assert_allclose(weight, expected, rtol=RTOL)
    output = layer(np.asarray(case["x"], np.float32))
    np.testing.assert_allclose(output.data, case["output"], rtol=RTOL, atol=ATOL)


# ----- arguments Keras refuses, in Keras' words where Keras raises -------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: keras.layers.ReLU(max_value=-1), "max_value of a ReLU layer cannot be a negative value. Received: -1"),
        (lambda: keras.layers.ReLU(negative_slope=-0.5), "negative_slope of a ReLU layer cannot be a negative value"),
        (lambda: keras.layers.ReLU(threshold=None), "threshold of a ReLU layer cannot be a negative value"),
        (lambda: keras.layers.LeakyReLU(alpha=None), "The alpha value of a Leaky ReLU layer cannot be None"),
        (lambda: keras.layers.ThresholdedReLU(theta=-1), "The theta value of a Thresholded ReLU layer should be >=0"),
        (lambda: keras.layers.ELU(alpha=None), "Alpha of an ELU layer cannot be None, expecting a float"),
        (lambda: keras.layers.Conv2D(0, 3), "Invalid value for argument `filters`. Expected a strictly positive"),
        (
            lambda: keras.layers.Conv2D(4, 3, strides=2, dilation_rate=2),
            r"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: strides=\(2, 2\)",
        ),
        (lambda: keras.layers.Conv1D(4, 3, strides=2, dilation_rate=2), "`strides > 1` not supported"),
        (lambda: keras.layers.Conv2DTranspose(4, 3, output_padding=1), "does not simulate output_padding"),
        (lambda: keras.layers.DepthwiseConv2D(3, depth_multiplier=0), "depth_multiplier must be a positive integer"),
        (lambda: keras.layers.UpSampling2D(interpolation="bilinear"), "interpolation='nearest' only, got 'bilinear'"),
        (lambda: keras.layers.Cropping2D(((1, 2, 3), 0)), "Cropping2D: cropping must be an int, a pair of ints"),
        (lambda: keras.layers.Normalization(mean=[1.0]), "both `mean` and `variance` must be set. Got mean: \\[1.0\\]"),
        (lambda: keras.layers.PReLU(alpha_constraint="non_neg"), "alpha_constraint is not simulated"),
    ],
)
def test_bad_arguments_are_refused_with_keras_messages(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_cropping_more_than_the_input_and_a_dilated_kernel_too_large_are_refused():
    with pytest.raises(ValueError, match="Argument `cropping` must be greater than the input shape"):
        keras.layers.Cropping2D(((2, 2), (0, 0)))(keras.Input((4, 5, 1)))
    with pytest.raises(ValueError, match=r"a kernel_size of 3x3 does not fit an input of 4x9"):
        keras.layers.Conv2D(2, 3, dilation_rate=2)(keras.Input((4, 9, 1)))


def test_normalization_with_static_statistics_cannot_adapt():
    layer = keras.layers.Normalization(mean=1.0, variance=4.0)
    with pytest.raises(ValueError, match="Cannot `adapt` a Normalization layer that is initialized with static"):
        layer.adapt(np.ones((3, 2), np.float32))
    np.testing.assert_allclose(layer(np.array([[3.0, 5.0]], np.float32)).data, [[1.0, 2.0]])


# ----- noise layers: identity in inference, Keras' training behaviour -----------------------------------


def test_spatial_dropout_drops_whole_channels_and_scales_the_rest():
    keras.utils.set_random_seed(1)
    layer = keras.layers.SpatialDropout2D(0.5)
    x = np.ones((4, 3, 3, 8), np.float32)
    assert layer(x).data is not None and (layer(x).data == x).all()  # inference: unchanged
    y = layer(x, training=True).data
    assert set(np.unique(y)) == {0.0, 2.0}
    assert (y == y[:, :1, :1, :]).all()  # one draw per sample and channel
    assert 0.3 < (y == 0).mean() < 0.7
    with pytest.raises(ValueError, match="expected ndim=4, found ndim=2"):
        layer(np.ones((2, 3), np.float32))


def test_gaussian_noise_adds_seeded_noise_of_its_stddev_in_training_only():
    x = np.zeros((200, 50), np.float32)
    layer = keras.layers.GaussianNoise(0.5)
    assert (layer(x).data == 0).all()
    keras.utils.set_random_seed(3)
    noisy = layer(x, training=True).data
    assert abs(noisy.std() - 0.5) < 0.02 and abs(noisy.mean()) < 0.02
    keras.utils.set_random_seed(3)
    np.testing.assert_array_equal(layer(x, training=True).data, noisy)


# ----- serialization and the IPU --------------------------------------------------------------------


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_layers_round_trip_through_get_config(case):
    layer = getattr(keras.layers, case["class"])(**_arguments(case["arguments"]))
    config = json.loads(json.dumps(layer.get_config()))
    remade = type(layer).from_config(config)
    assert remade.get_config() == config
    x = np.asarray(case["x"], np.float32)
    layer(x), remade(x)
    remade.set_weights(layer.get_weights())
    np.testing.assert_array_equal(remade(x).data, layer(x).data)


def _breadth_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [
            keras.layers.Rescaling(1 / 2, offset=0.1, input_shape=(8, 8, 2)),
            keras.layers.Conv2D(4, 3, padding="same", dilation_rate=2),
            keras.layers.LeakyReLU(0.2),
            keras.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same"),
            keras.layers.PReLU(shared_axes=[1, 2]),
            keras.layers.SeparableConv2D(4, 3, strides=2, padding="same"),
            keras.layers.ReLU(max_value=6.0),
            keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same"),
            keras.layers.Cropping2D(1),
            keras.layers.UpSampling2D(),
            keras.layers.ELU(),
            keras.layers.Reshape((12, 36)),
            keras.layers.Bidirectional(keras.layers.GRU(3, reset_after=False, return_sequences=True)),
            keras.layers.Bidirectional(keras.layers.LSTM(2, dropout=0.2, recurrent_dropout=0.1), merge_mode="ave"),
            keras.layers.Flatten(),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )


def test_a_model_of_the_new_layers_saves_and_loads(tmp_path):
    model = _breadth_model()
    x = np.random.default_rng(0).normal(size=(4, 8, 8, 2)).astype(np.float32)
    model.save(tmp_path / "breadth.keras")
    loaded = keras.models.load_model(tmp_path / "breadth.keras", compile=False)
    assert [type(layer).__name__ for layer in loaded.layers] == [type(layer).__name__ for layer in model.layers]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_the_new_layers_train_on_the_simulated_ipu_as_on_the_cpu():
    """Numerics do not depend on the device, and every new op is costed: its matrix products (the
    transposed convolution's, the separable one's pointwise product) are in the IPU's recorded step."""
    from ipu_teach.autograd import record

    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(8, 8, 8, 2)).astype(np.float32), rng.integers(0, 3, 8)
    cpu = _breadth_model()
    cpu.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy")
    cpu.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    with single_ipu_scope():
        on_ipu = _breadth_model()
        on_ipu.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy", steps_per_execution=2)
        history = on_ipu.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    for mine, theirs in zip(on_ipu.get_weights(), cpu.get_weights()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
    with record() as tape:
        cpu(x[:4])
    ops_seen = {}
    for r in tape:
        ops_seen.setdefault(r.op, r)  # the first of each: the DepthwiseConv2D layer's, before SeparableConv2D's
    assert {"Conv2DTranspose", "DepthwiseConv2D", "GeneralReLU", "Upsample", "Reverse"} <= set(ops_seen)
    assert ops_seen["Conv2DTranspose"].forward.products and not ops_seen["DepthwiseConv2D"].forward.products
    assert ops_seen["DepthwiseConv2D"].forward.flops == 2 * 9 * 4 * 8 * 8 * 8  # a multiply-add per tap and output
