"""8-bit images, as Graphcore's ResNet-50 feeds them (graphcore/examples applications/tensorflow/cnns/training,
``eight_bit_io``: the host streams uint8 pixels, the model casts them on the IPU): in Keras a ``uint8`` Input read
by a ``Rescaling`` layer. The host streams a quarter of fp32's bytes, the cast is a compute set on the device, and
the numbers are those of the same model fed the same pixels as float32."""

import numpy as np
import pytest

from ipu_teach import ipu, keras
from ipu_teach.examples import configure_ipus

SHAPE = (16, 16, 3)
BATCH = 8


def pixel_model(dtype):
    keras.utils.set_random_seed(5)
    inputs = keras.Input(shape=SHAPE, dtype=dtype)
    x = keras.layers.Rescaling(1 / 255)(inputs)
    x = keras.layers.Conv2D(4, 3, activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(x))


def pixels(n=4 * BATCH):
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, size=(n, *SHAPE)).astype(np.uint8), rng.integers(0, 3, size=n)


def trained(dtype, x, y):
    configure_ipus(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = pixel_model(dtype)
        model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", steps_per_execution=4)
        history = model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
        return model, history.history["loss"], model.get_ipu_executable("train").graph


def test_a_uint8_input_streams_a_quarter_of_the_bytes_and_casts_on_the_device():
    x, y = pixels()
    _, _, floats = trained(None, x.astype(np.float32), y)
    _, _, eight_bit = trained("uint8", x, y)
    pixel_count = int(np.prod(SHAPE))
    labels = 4  # sparse labels stream as 32-bit integers
    assert floats.input_bytes == BATCH * (pixel_count * 4 + labels)
    assert eight_bit.input_bytes == BATCH * (pixel_count + labels)
    cast = [s for s in eight_bit.forward if s.name.startswith("rescaling") and "/Cast:" in s.name]
    assert cast and cast[0].cycles.max() > 0
    assert not [s for s in floats.forward if s.name.startswith("rescaling") and "/Cast:" in s.name]


def test_eight_bit_pixels_train_to_the_same_numbers_as_float_ones():
    x, y = pixels()
    float_model, float_loss, _ = trained(None, x.astype(np.float32), y)
    byte_model, byte_loss, _ = trained("uint8", x, y)
    assert byte_loss == float_loss
    for a, b in zip(float_model.weights, byte_model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_estimate_sizes_the_declared_dtype_and_the_model_keeps_it_in_its_configuration():
    configure_ipus(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = pixel_model("uint8")
        model.compile("sgd", "sparse_categorical_crossentropy")
        sizing = ipu.utils.estimate(model, batch_size=BATCH)
    assert sizing.executable.graph.input_bytes == BATCH * (int(np.prod(SHAPE)) + 4)
    assert model.inputs[0].dtype == "uint8"
    rebuilt = keras.Model.from_config(model.get_config())
    assert rebuilt.inputs[0].dtype == "uint8"
    assert model.get_config()["layers"][0]["config"]["dtype"] == "uint8"


def test_a_float_input_still_holds_float32_and_64_bit_integers_stream_as_32_bit():
    assert keras.Input(shape=(2,)).dtype == "float32"
    assert keras.Input(shape=(2,), dtype="int64").dtype == "int64"
    configure_ipus(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        ids = keras.Input(shape=(4,), dtype="int64")
        model = keras.Model(ids, keras.layers.Dense(2)(keras.layers.Embedding(10, 3)(ids)))
        model.compile("sgd", "mse")
        sizing = ipu.utils.estimate(model, batch_size=BATCH)
    assert sizing.executable.graph.input_bytes == BATCH * (4 * 4 + 4 * 2 * 4)


def test_an_unknown_input_dtype_is_refused_with_what_to_give():
    with pytest.raises(
        ValueError, match=r"keras.Input: dtype must be a dtype such as 'float32', 'int32' or 'uint8', got 'pixels'"
    ):
        keras.Input(shape=(2,), dtype="pixels")
