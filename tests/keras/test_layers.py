"""Layer behaviour in training and inference: Dropout and BatchNormalization, as Keras runs them."""

import numpy as np
import pytest

import ipu_teach.keras as keras


def test_dropout_is_active_in_fit_only():
    x = np.ones((200, 50), dtype=np.float32)
    inputs = keras.Input(shape=(50,))
    outputs = keras.layers.Dropout(0.5)(inputs)
    model = keras.Model(inputs, outputs)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    np.testing.assert_array_equal(model(x).data, x)
    trained = model(x, training=True).data
    assert set(np.unique(trained)) == {0.0, 2.0}  # dropped, or kept and scaled by 1 / (1 - rate)
    assert (trained == 0).mean() == pytest.approx(0.5, abs=0.03)


def test_dropout_masks_training_but_not_evaluation():
    """With a huge rate the training loss (masked) differs from evaluate's on the same weights."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 6)).astype(np.float32)
    y = x @ rng.normal(size=(6, 1)).astype(np.float32)
    model = keras.Sequential([keras.layers.Dropout(0.9, input_shape=(6,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.SGD(learning_rate=1e-12), "mse")
    train_loss = model.fit(x, y, batch_size=64, epochs=1, verbose=0).history["loss"][0]
    eval_loss = model.evaluate(x, y, batch_size=64, verbose=0)
    expected_eval = np.mean((model.predict(x, verbose=0) - y) ** 2)
    assert eval_loss == pytest.approx(expected_eval, rel=1e-5)
    assert abs(train_loss - eval_loss) > 0.1 * eval_loss


def test_batch_normalization_training_uses_batch_statistics_and_updates_moving_averages():
    rng = np.random.default_rng(1)
    x = (3.0 + 2.0 * rng.normal(size=(32, 4))).astype(np.float32)
    layer = keras.layers.BatchNormalization()
    out = layer(x, training=True).data
    mean, var = x.astype(np.float64).mean(0), x.astype(np.float64).var(0)
    np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    moving_mean, moving_variance = layer.get_weights()[2:]
    np.testing.assert_allclose(moving_mean, 0.01 * mean, rtol=1e-5)  # momentum 0.99 from zeros
    np.testing.assert_allclose(moving_variance, 0.99 + 0.01 * var, rtol=1e-5)  # from ones


def test_batch_normalization_inference_uses_moving_averages():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    layer = keras.layers.BatchNormalization()
    layer(x[:2])  # build
    gamma, beta = np.float32([1.5, 2.0, 0.5]), np.float32([0.1, -0.2, 0.3])
    moving_mean, moving_variance = np.float32([0.5, -1.0, 2.0]), np.float32([4.0, 0.25, 1.0])
    layer.set_weights([gamma, beta, moving_mean, moving_variance])
    expected = gamma * (x - moving_mean) / np.sqrt(moving_variance + 1e-3) + beta
    np.testing.assert_allclose(layer(x).data, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(layer.get_weights()[2], moving_mean)  # inference leaves them alone


def test_batch_normalization_weights_and_fit_update():
    rng = np.random.default_rng(3)
    x = rng.normal(loc=5.0, size=(40, 3)).astype(np.float32)
    y = rng.normal(size=(40, 1)).astype(np.float32)
    model = keras.Sequential([keras.layers.BatchNormalization(input_shape=(3,)), keras.layers.Dense(1)])
    bn = model.layers[0]
    assert [w.name for w in bn.weights] == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert len(bn.trainable_weights) == 2 and len(bn.non_trainable_weights) == 2
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=10, epochs=1, verbose=0, shuffle=False)
    expected_mean = np.zeros(3)
    for start in range(0, 40, 10):
        expected_mean = 0.99 * expected_mean + 0.01 * x[start : start + 10].mean(0)
    np.testing.assert_allclose(bn.get_weights()[2], expected_mean, rtol=1e-4)
    before = model.get_weights()
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "make, shape, expected",
    [
        (lambda: keras.layers.Conv2D(4, 3, name="conv"), (None, 28, 28), "expected ndim=4, found ndim=3"),
        (lambda: keras.layers.MaxPooling2D(name="pool"), (None, 10), "expected ndim=4, found ndim=2"),
        (lambda: keras.layers.Dense(4, name="fc"), (None,), "expected min_ndim=2, found ndim=1"),
    ],
)
def test_layer_on_wrong_rank_names_layer_expected_and_got(make, shape, expected):
    layer = make()
    with pytest.raises(ValueError, match=expected) as info:
        layer(keras.Input(batch_shape=shape) if len(shape) > 1 else keras.Input(shape=()))
    assert f'layer "{layer.name}"' in str(info.value)


def test_built_layer_called_on_different_shape_names_layer_and_axis():
    dense = keras.layers.Dense(3, name="head")
    dense(keras.Input(shape=(8,)))
    with pytest.raises(ValueError, match=r'layer "head".*expected axis 1 of input shape to have value 8.*\(None, 5\)'):
        dense(keras.Input(shape=(5,)))


def test_flatten_reshape_pooling_shapes():
    x = keras.Input(shape=(9, 9, 2))
    pooled = keras.layers.MaxPooling2D(pool_size=3, strides=2, padding="same")(x)
    averaged = keras.layers.AveragePooling2D()(x)
    assert pooled.shape == (None, 5, 5, 2) and averaged.shape == (None, 4, 4, 2)
    assert keras.layers.Flatten()(pooled).shape == (None, 50)
    assert keras.layers.Reshape((25, 2))(pooled).shape == (None, 25, 2)
    with pytest.raises(ValueError, match="cannot reshape"):
        keras.layers.Reshape((7, 7))(pooled)


def test_gelu_by_name_as_keras_and_saved_with_the_model(tmp_path):
    """``activation="gelu"`` is Keras' exact GELU (``activations.gelu(x, approximate=False)``); the name is
    what the saved model records, so a loaded model predicts the same."""
    x = np.array([[-3.0, -1.0, 0.0, 1.0, 3.0]], np.float32)
    np.testing.assert_allclose(
        keras.layers.Activation("gelu")(x).data, [[-0.004049694, -0.15865525, 0.0, 0.84134475, 2.9959503]], rtol=1e-6
    )
    approximate = keras.activations.gelu(x, approximate=True).data
    np.testing.assert_allclose(
        approximate, [[-0.00363752, -0.15880796, 0.0, 0.841192, 2.9963627]], rtol=1e-6, atol=2e-7
    )  # at -3, 1 + tanh(...) cancels in float32: Keras' printed value is 1e-7 off too
    model = keras.Sequential([keras.layers.Dense(4, activation="gelu", input_shape=(5,))])
    model.save(tmp_path / "gelu.keras")
    loaded = keras.models.load_model(tmp_path / "gelu.keras", compile=False)
    assert loaded.layers[0].get_config()["activation"] == "gelu"
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
