"""Two-input, residual and multi-output models; per-output losses, metrics and loss_weights with
Keras' names; sample and class weights; *_on_batch; whole-model saving."""

import numpy as np
import pytest
from keras_helpers import tiny_classification

import ipu_teach.keras as keras

L = keras.layers


def two_outputs():
    inputs = keras.Input(shape=(4,))
    h = L.Dense(8, activation="relu")(inputs)
    h = L.Add()([h, L.Dense(8)(inputs)])  # residual-style merge
    return keras.Model(inputs, [L.Dense(3, activation="softmax")(h), L.Dense(1)(h)])


def test_multi_output_fit_logs_keras_names_and_weights_the_total():
    x, y = tiny_classification(n=32)
    target = x[:, :1] * 2
    model = two_outputs()
    model.compile(
        "sgd", loss=["sparse_categorical_crossentropy", "mse"], loss_weights=[1.0, 0.5], metrics=[["accuracy"], []]
    )
    history = model.fit(x, [y, target], batch_size=32, epochs=1, verbose=0)
    assert model.metrics_names == ["loss", "dense_2_loss", "dense_3_loss", "dense_2_accuracy"]
    logs = {k: v[0] for k, v in history.history.items()}
    assert logs["loss"] == pytest.approx(logs["dense_2_loss"] + 0.5 * logs["dense_3_loss"], rel=1e-5)
    as_dict = model.evaluate(x, {"dense_3": target, "dense_2": y}, verbose=0, return_dict=True)
    assert list(as_dict) == model.metrics_names


def test_loss_dict_with_an_unknown_output_names_the_outputs():
    model = two_outputs()
    model.compile("sgd", loss={"dense_9": "mse"})
    x, y = tiny_classification(n=8)
    with pytest.raises(
        ValueError,
        match=r"Unknown entries in loss dictionary: \['dense_9'\]. Only expected "
        r"following keys: \['dense_2', 'dense_3'\]",
    ):
        model.fit(x, [y, y], verbose=0)


def test_two_input_model_with_concatenate_multiply_and_average():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    merged = L.Concatenate()([L.Multiply()([a, b]), L.Average()([a, b]), L.Subtract()([a, b])])
    model = keras.Model([a, b], merged)
    xa, xb = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 2, np.float32)
    np.testing.assert_allclose(
        model.predict([xa, xb], verbose=0), np.concatenate([xa * xb, (xa + xb) / 2, xa - xb], axis=1)
    )


def test_merge_layers_reject_incompatible_shapes():
    with pytest.raises(ValueError, match=r"inputs have incompatible shapes. Received shapes \(None, 3\), \(None, 4\)"):
        L.Add()([keras.Input(shape=(3,)), keras.Input(shape=(4,))])
    with pytest.raises(ValueError, match="should be called on a list of inputs"):
        L.Add()(keras.Input(shape=(3,)))


def _trained_loss(weights_kind):
    x, y = tiny_classification(n=16)
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, L.Dense(3, activation="softmax")(inputs))
    model.compile("sgd", "sparse_categorical_crossentropy")
    kwargs = {"sample": {"sample_weight": (y == 1) * 3.0}, "class": {"class_weight": {1: 3.0, 0: 0.0, 2: 0.0}}}[
        weights_kind
    ]
    return model, model.train_on_batch(x, y, **kwargs), x, y


@pytest.mark.parametrize("kind", ["sample", "class"])
def test_sample_and_class_weights_scale_each_sample_loss_over_the_batch_size(kind):
    model, _, x, y = _trained_loss(kind)
    weights = (y == 1) * 3.0
    per_sample = keras.losses.SparseCategoricalCrossentropy(reduction="none")(y, model(x)).data
    expected = float((per_sample * weights).sum() / len(y))
    assert model.test_on_batch(x, y, sample_weight=weights) == pytest.approx(expected, rel=1e-5)
    assert model.test_on_batch(x, y, sample_weight=weights[:, None]) == pytest.approx(expected, rel=1e-5)  # as Keras


def test_on_batch_methods_match_one_step():
    x, y = tiny_classification(n=8)
    model = keras.Sequential([L.Dense(3, activation="softmax", input_shape=(4,))])
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
    before = model.get_weights()
    loss, grads, _ = model.compute_gradients(x, y)
    model.set_weights(before)
    assert model.train_on_batch(x, y) == pytest.approx([float(loss), model.metrics[1].result()])
    np.testing.assert_allclose(model.get_weights()[0], before[0] - 0.1 * grads[0], rtol=1e-5)
    np.testing.assert_array_equal(model.predict_on_batch(x), model.predict(x, verbose=0))
    assert set(model.test_on_batch(x, y, return_dict=True)) == {"loss", "accuracy"}


def _sequence_model():
    inputs = keras.Input(shape=(5,))
    x = L.Embedding(10, 4)(inputs)
    x = L.Conv1D(4, 3, padding="causal", activation="relu")(x)
    x = L.LSTM(6, return_sequences=True)(x)
    x = L.LayerNormalization()(L.GRU(5)(x))
    return keras.Model(inputs, L.Dense(3, activation="softmax")(x))


def test_save_load_continue_training_equals_uninterrupted_training(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 10, size=(24, 5)), rng.integers(0, 3, size=24)

    def fresh():
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)
        model = _sequence_model()
        model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
        return model

    straight = fresh()
    straight.fit(x, y, batch_size=8, epochs=4, verbose=0, shuffle=False)
    first = fresh()
    first.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    first.save(tmp_path / "model.keras")
    resumed = keras.models.load_model(tmp_path / "model.keras")
    assert [type(layer).__name__ for layer in resumed.layers] == [type(layer).__name__ for layer in first.layers]
    resumed.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
    for a, b in zip(straight.get_weights(), resumed.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_load_model_refuses_a_file_that_is_not_a_saved_model(tmp_path):
    path = tmp_path / "weights.npz"
    np.savez(path, a=np.ones(2))
    with pytest.raises(ValueError, match="not a model saved by ipu-teach's model.save"):
        keras.models.load_model(path)


def test_from_config_makes_a_model_inside_a_model_again_and_refuses_unknown_classes():
    inner_in = keras.Input((3,), name="inner_in")
    inner = keras.Model(inner_in, keras.layers.Dense(2, name="inner_dense")(inner_in), name="inner")
    outer_in = keras.Input((3,), name="outer_in")
    outer = keras.Model(outer_in, keras.layers.Dense(1, name="top")(inner(outer_in)), name="outer")
    config = outer.get_config()
    assert [layer["class_name"] for layer in config["layers"]] == ["InputLayer", "Functional", "Dense"]
    assert keras.Model.from_config(config).count_params() == outer.count_params() == 11
    config["layers"][2]["class_name"] = "__class__"
    with pytest.raises(ValueError, match=r"Unknown layer: '__class__'. Pass its class in custom_objects"):
        keras.Model.from_config(config)
    config["layers"][2]["class_name"] = "Dense"
    config["layers"][2]["inbound_nodes"] = [[["nowhere", 0, 0, {}]]]
    with pytest.raises(ValueError, match=r"node 0 of layer 'top' is called on \[\['nowhere', 0\]\]"):
        keras.Model.from_config(config)
