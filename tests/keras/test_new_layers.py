"""The sequence and reshaping layers against independent numpy formulas (TF2's), and the recurrent
layers' gradients against central differences in float64."""

import numpy as np
import pytest
from helpers.gradcheck import check_gradients
from hypothesis import given, settings
from hypothesis import strategies as st

import ipu_teach.keras as keras

L = keras.layers


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm_reference(x, kernel, recurrent, bias, units):
    h = c = np.zeros((x.shape[0], units))
    for t in range(x.shape[1]):
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = (z[:, k * units : (k + 1) * units] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    return h


def gru_reference(x, kernel, recurrent, bias, units):
    h = np.zeros((x.shape[0], units))
    for t in range(x.shape[1]):
        xs, rs = x[:, t] @ kernel + bias[0], h @ recurrent + bias[1]
        z = sigmoid(xs[:, :units] + rs[:, :units])
        r = sigmoid(xs[:, units : 2 * units] + rs[:, units : 2 * units])
        hh = np.tanh(xs[:, 2 * units :] + r * rs[:, 2 * units :])
        h = z * h + (1 - z) * hh
    return h


@pytest.mark.parametrize("layer, reference", [(L.LSTM, lstm_reference), (L.GRU, gru_reference)])
def test_recurrent_layers_follow_tf2_formulas(layer, reference):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4, 3)).astype(np.float32)
    rnn = layer(5)
    out = rnn(x).data
    rnn.set_weights([w + rng.normal(scale=0.1, size=w.shape).astype(np.float32) for w in rnn.get_weights()])
    np.testing.assert_allclose(rnn(x).data, reference(x, *rnn.get_weights(), 5), rtol=1e-4, atol=1e-5)
    assert out.shape == (2, 5) and layer(5, return_sequences=True)(x).shape == (2, 4, 5)


def test_lstm_forget_bias_starts_at_one():
    lstm = L.LSTM(2)
    lstm(np.zeros((1, 1, 3)))
    np.testing.assert_array_equal(lstm.bias.data, [0, 0, 1, 1, 0, 0, 0, 0])


@settings(max_examples=8, deadline=None)
@given(
    layer=st.sampled_from(["LSTM", "GRU"]),
    steps=st.integers(2, 3),
    units=st.integers(1, 3),
    backwards=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_recurrent_gradients_match_central_differences(layer, steps, units, backwards, seed):
    rng = np.random.default_rng(seed)
    rnn = getattr(L, layer)(units, return_sequences=True, go_backwards=backwards)
    rnn(np.zeros((1, steps, 2), np.float32))

    def run(x, kernel, recurrent, bias):
        rnn.kernel, rnn.recurrent_kernel, rnn.bias = kernel, recurrent, bias
        return rnn.call(x)

    arrays = [rng.normal(size=(2, steps, 2))] + [rng.normal(scale=0.5, size=w.shape) for w in rnn.get_weights()]
    check_gradients(run, arrays, seed=seed)


def test_conv1d_causal_sees_only_the_past():
    x = np.zeros((1, 6, 1), np.float32)
    x[0, 3, 0] = 1
    conv = L.Conv1D(1, 3, padding="causal", kernel_initializer="ones", use_bias=False)
    np.testing.assert_array_equal(conv(x).data[0, :, 0], [0, 0, 0, 1, 1, 1])


def test_reshaping_layers_match_numpy():
    x = np.arange(2 * 3 * 4 * 2, dtype=np.float32).reshape(2, 3, 4, 2)
    np.testing.assert_array_equal(L.Permute((3, 1, 2))(x).data, x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(
        L.ZeroPadding2D(((1, 0), (2, 1)))(x).data, np.pad(x, ((0, 0), (1, 0), (2, 1), (0, 0)))
    )
    np.testing.assert_allclose(L.GlobalAveragePooling2D()(x).data, x.mean(axis=(1, 2)))
    np.testing.assert_array_equal(L.Embedding(5, 2)(np.array([[4, 0]])).shape, (1, 2, 2))
    with pytest.raises(ValueError, match="must be consecutive and start from 1"):
        L.Permute((0, 1))


def test_layer_normalization_normalises_each_sample():
    x = np.random.default_rng(1).normal(3, 2, size=(4, 6)).astype(np.float32)
    out = L.LayerNormalization(epsilon=0)(x).data
    np.testing.assert_allclose(out.mean(axis=-1), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(axis=-1), 1, rtol=1e-4)
