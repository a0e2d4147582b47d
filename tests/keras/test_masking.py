"""Masks as Keras: ``Embedding(mask_zero=True)`` marks index 0 as padding, layers that support masking
(Dense, Dropout, the activations, Bidirectional, the RNNs returning sequences) carry the mask on, and LSTM
and GRU skip the masked timesteps (state kept, last output repeated, or zeros inside Bidirectional).
Compared with tf-keras on left- and right-padded sequences (``golden/masking.json``, written by
tools/make_keras_goldens.py)."""

import json
import pathlib

import numpy as np
import pytest
from keras_helpers import single_ipu_scope

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "masking.json").read_text())
IDS = np.asarray(GOLDEN["ids"])


def _model(stack):
    inputs = keras.Input((IDS.shape[1],))
    x = keras.layers.Embedding(7, 3, mask_zero=True)(inputs)
    for class_name, arguments in stack:
        x = getattr(keras.layers, class_name)(**arguments)(x)
    return keras.Model(inputs, x)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_masked_sequences_give_keras_outputs_and_gradients(case):
    model = _model(case["stack"])
    model.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    y = model.call(IDS, training=True)
    np.testing.assert_allclose(y.data, case["output"], rtol=1e-5, atol=1e-6)
    y.backward(np.asarray(case["upstream"], np.float32))
    for weight, expected in zip(model.trainable_weights, case["weight_gradients"]):
        np.testing.assert_allclose(weight.grad, expected, rtol=1e-4, atol=1e-6, err_msg=weight.name)


def test_without_mask_zero_the_padding_counts():
    """The same model with ``mask_zero=False`` differs on padded rows only: the mask is what skips them."""
    stack = GOLDEN["cases"][0]["stack"]
    masked, plain = _model(stack), _model(stack)
    plain.layers[1].mask_zero = plain.layers[1].supports_masking = False
    plain.set_weights(masked.get_weights())
    same = masked.predict(IDS, verbose=0) == plain.predict(IDS, verbose=0)
    assert same[2].all() and not same[:2].all()  # row 2 has no padding


def test_embedding_mask_and_what_layers_do_with_it():
    embedding = keras.layers.Embedding(5, 2, mask_zero=True)
    out = embedding(np.array([[1, 0, 2]]))
    assert out._keras_mask.tolist() == [[True, False, True]]
    for carrier in (keras.layers.Dense(3), keras.layers.LayerNormalization(), keras.layers.BatchNormalization()):
        assert carrier(out)._keras_mask.tolist() == [[True, False, True]]  # carried on
    assert keras.layers.LSTM(2)(out)._keras_mask is None  # consumed
    assert keras.layers.LSTM(2, return_sequences=True)(out)._keras_mask.tolist() == [[True, False, True]]
    assert keras.layers.Flatten()(out)._keras_mask is None  # a layer without masking support drops it
    assert keras.layers.Embedding(5, 2)(np.array([[1, 0]]))._keras_mask is None
    with pytest.raises(TypeError, match="Layer flatten_1 does not support masking, but was passed an input_mask"):
        keras.layers.Flatten(name="flatten_1").compute_mask(Tensor(np.ones((1, 3))), np.array([[True, False, True]]))


def test_a_fully_masked_sequence_gives_zeros_as_keras_zero_initial_state():
    layer = keras.layers.GRU(2)
    x = Tensor(np.ones((1, 3, 2), np.float32))
    x._keras_mask = np.zeros((1, 3), bool)
    np.testing.assert_array_equal(layer(x).data, np.zeros((1, 2), np.float32))


def _classifier():
    keras.utils.set_random_seed(0)
    inputs = keras.Input((IDS.shape[1],))
    x = keras.layers.Embedding(7, 4, mask_zero=True)(inputs)
    x = keras.layers.Bidirectional(keras.layers.LSTM(3, return_sequences=True))(x)
    outputs = keras.layers.Dense(2, activation="softmax")(keras.layers.GRU(3, reset_after=False)(x))
    return keras.Model(inputs, outputs)


def test_a_masked_model_saves_loads_and_trains_alike_on_the_simulated_ipu(tmp_path):

    ids, labels = np.concatenate([IDS, IDS[::-1]]), np.array([0, 1, 1, 0, 1, 0])
    model = _classifier()
    model.save(tmp_path / "masked.keras")
    loaded = keras.models.load_model(tmp_path / "masked.keras", compile=False)
    np.testing.assert_array_equal(loaded.predict(ids, verbose=0), model.predict(ids, verbose=0))
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    model.fit(ids, labels, batch_size=3, epochs=2, shuffle=False, verbose=0)
    with single_ipu_scope():
        on_ipu = _classifier()
        on_ipu.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", steps_per_execution=2)
    on_ipu.fit(ids, labels, batch_size=3, epochs=2, shuffle=False, verbose=0)
    for mine, theirs in zip(on_ipu.get_weights(), model.get_weights()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", GOLDEN["states"], ids=lambda case: case["class"])
def test_return_state_gives_keras_states_on_masked_sequences(case):
    embedding = keras.layers.Embedding(7, 3, mask_zero=True)
    layer = getattr(keras.layers, case["class"])(**case["arguments"])
    layer(embedding(IDS))
    weights = [np.asarray(w, np.float32) for w in case["weights"]]
    embedding.set_weights(weights[:1])
    layer.set_weights(weights[1:])
    outputs = layer(embedding(IDS))
    assert len(outputs) == len(case["outputs"])
    for mine, expected in zip(outputs, case["outputs"]):
        np.testing.assert_allclose(mine.data, expected, rtol=1e-5, atol=1e-6)
