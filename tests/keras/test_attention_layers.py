"""MultiHeadAttention, EinsumDense and GELU against tf-keras 2.21: outputs, attention scores and the gradients of
sum(upstream * output) from the same seeded weights. The fixture ``golden/attention.json`` was written by
``tools/make_keras_goldens.py`` (section ``attention``) in the reference environment; nothing here needs TensorFlow."""

import json
import pathlib

import numpy as np
import pytest

from ipu_teach import keras
from ipu_teach.autograd import Tensor

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "attention.json").read_text())
RTOL, ATOL = 1e-5, 1e-5


def _tensor(values, requires_grad=True):
    return None if values is None else Tensor(np.asarray(values, np.float32), requires_grad=requires_grad)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_multi_head_attention_matches_keras(case):
    layer = keras.layers.MultiHeadAttention(**case["arguments"])
    query, value, key = (_tensor(case[name]) for name in ("query", "value", "key"))
    mask = None if case["mask"] is None else np.asarray(case["mask"], np.int32)
    layer(query, value, key=key, attention_mask=mask)  # builds it
    assert [w.name for w in layer.weights] == [
        n.split("/", 1)[1] for n in case["weight_names"]
    ]  # Keras prefixes the outer layer
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    output, scores = layer(query, value, key=key, attention_mask=mask, return_attention_scores=True, training=True)
    np.testing.assert_allclose(output.data, case["output"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(scores.data, case["scores"], rtol=RTOL, atol=ATOL)
    output.backward(np.asarray(case["upstream"], np.float32))
    inputs = [t for t in (query, value, key) if t is not None]
    for tensor, expected, name in zip(inputs, case["input_gradients"], ("query", "value", "key")):
        np.testing.assert_allclose(tensor.grad, expected, rtol=RTOL, atol=ATOL, err_msg=name)
    for weight, expected in zip(layer.trainable_weights, case["weight_gradients"], strict=True):
        np.testing.assert_allclose(weight.grad, expected, rtol=RTOL, atol=ATOL, err_msg=weight.name)


def test_multi_head_attention_in_a_functional_model_takes_the_mask_as_an_input():
    case = GOLDEN["cases"][0]
    query, value = keras.Input(np.shape(case["query"])[1:]), keras.Input(np.shape(case["value"])[1:])
    mask = keras.Input(np.shape(case["mask"])[1:], dtype="int32")
    layer = keras.layers.MultiHeadAttention(**case["arguments"])
    model = keras.Model([query, value, mask], layer(query, value, attention_mask=mask))
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    assert model.output_shape == (None, *np.shape(case["output"])[1:])
    given = [np.asarray(case["query"], np.float32), np.asarray(case["value"], np.float32), np.asarray(case["mask"])]
    np.testing.assert_allclose(model.predict(given, verbose=0), case["output"], rtol=RTOL, atol=ATOL)


def test_einsum_dense_matches_keras():
    case = GOLDEN["einsum_dense"]
    layer = keras.layers.experimental.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    x = np.asarray(case["x"], np.float32)
    layer(x)
    layer.set_weights([np.asarray(w, np.float32) for w in case["weights"]])
    np.testing.assert_allclose(layer(x).data, case["output"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_matches_keras(approximate):
    x = np.asarray(GOLDEN["gelu"]["x"], np.float32)
    np.testing.assert_allclose(
        keras.activations.gelu(Tensor(x), approximate=approximate).data,
        GOLDEN["gelu"][str(approximate)],
        rtol=1e-6,
        atol=1e-7,
    )


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: keras.layers.MultiHeadAttention(2, 4, attention_axes=(1, 2)),
            r"attention_axes=\(1, 2\) is not simulated",
        ),
        (lambda: keras.layers.EinsumDense("ab,bc", output_shape=3), "must have the form '<input>,<kernel>-><output>'"),
        (lambda: keras.layers.EinsumDense("abc,cd->abd", output_shape=(3,)), r"output_shape \(3,\) has 1 axes"),
        (lambda: keras.layers.EinsumDense("ab,bc->ad", output_shape=3), "an output index appears in neither operand"),
    ],
)
def test_attention_layers_refuse_what_they_cannot_build(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_multi_head_attention_needs_a_value():
    with pytest.raises(ValueError, match="give value, as Keras requires: layer\\(query, value\\)"):
        keras.layers.MultiHeadAttention(2, 4)(np.ones((1, 3, 4), np.float32))


def test_a_saved_model_keeps_what_each_attention_input_is(tmp_path):
    """tf-keras writes the call's value, key and attention_mask as the node's keywords (its get_config of this
    model gives exactly this node), so a reloaded model masks as the saved one did."""
    query, value, mask = keras.Input((4, 6)), keras.Input((5, 6)), keras.Input((4, 5))
    model = keras.Model([query, value, mask], keras.layers.MultiHeadAttention(2, 3)(query, value, attention_mask=mask))
    node = model.get_config()["layers"][-1]["inbound_nodes"]
    names = [t.layer.name for t in (query, value, mask)]
    assert node == [[[names[0], 0, 0, {"value": [names[1], 0, 0], "attention_mask": [names[2], 0, 0]}]]]
    model.save(tmp_path / "attention.h5")
    loaded = keras.models.load_model(tmp_path / "attention.h5")
    rng = np.random.default_rng(5)
    x = [rng.normal(size=(2, 4, 6)), rng.normal(size=(2, 5, 6)), rng.uniform(size=(2, 4, 5)) > 0.5]
    x = [a.astype(np.float32) for a in x]
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_causal_mask_is_the_lower_triangle_and_combines_with_the_given_mask():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 4, 6)).astype(np.float32)
    layer = keras.layers.MultiHeadAttention(2, 3)
    causal, causal_scores = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    explicit = layer(x, x, attention_mask=np.tril(np.ones((2, 4, 4), np.int32)))
    np.testing.assert_array_equal(causal.data, explicit.data)
    assert np.all(np.triu(causal_scores.data[0, 0], k=1) == 0)
    padding = np.ones((2, 4, 4), np.int32)
    padding[:, :, 0] = 0  # no query may attend to the first key
    both = layer(x, x, attention_mask=padding, use_causal_mask=True, return_attention_scores=True)[1].data
    assert np.all(both[:, :, 1:, 0] == 0) and np.all(np.triu(both[0, 0], k=1)[1:] == 0)
    np.testing.assert_array_equal(both[:, :, 0], 0.25)  # the first query may attend to no key: uniform, as Keras'


def test_attention_dropout_drops_probabilities_in_training_only():
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(7).normal(size=(1, 5, 4)).astype(np.float32)
    layer = keras.layers.MultiHeadAttention(1, 4, dropout=0.5)
    inference = layer(x, x)
    np.testing.assert_array_equal(layer(x, x).data, inference.data)
    assert not np.allclose(layer(x, x, training=True).data, inference.data)
