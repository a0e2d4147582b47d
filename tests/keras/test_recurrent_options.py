"""The RNN options a porter meets, beyond tests/keras/test_layers_breadth.py's comparison with tf-keras
(GRU ``reset_after=False``, Bidirectional's merge modes): LSTM and GRU ``dropout`` and
``recurrent_dropout`` as Keras applies them, and the errors and configurations of Bidirectional."""

import json

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.keras.layers.core import dropout_mask

X = np.random.default_rng(0).normal(size=(3, 5, 4)).astype(np.float32)


def _pair(cls, x=X, **options):
    """A layer with dropout options and the same layer without, sharing weights, built for ``x``."""
    keras.utils.set_random_seed(0)
    others = {k: v for k, v in options.items() if "dropout" not in k}
    with_dropout, plain = cls(3, **options), cls(3, **others)
    with_dropout(x), plain(x)
    plain.set_weights(with_dropout.get_weights())
    return with_dropout, plain


@pytest.mark.parametrize("cls", [keras.layers.LSTM, keras.layers.GRU])
def test_dropout_is_one_input_mask_for_the_whole_sequence(cls):
    """With ``dropout`` alone, Keras' cells (``implementation=2``) multiply the inputs of every timestep by
    one mask of 0 and ``1 / (1 - rate)`` drawn per sequence: the layer equals the plain one on the masked inputs."""
    layer, plain = _pair(cls, dropout=0.4)
    np.testing.assert_array_equal(layer(X).data, plain(X).data)  # inference: no dropout
    keras.utils.set_random_seed(5)
    trained = layer(X, training=True).data
    keras.utils.set_random_seed(5)
    mask = dropout_mask(keras.backend.rng(), (3, 1, 4), 0.4).data
    assert set(np.unique(mask)) == {0.0, np.float32(1 / 0.6)}
    np.testing.assert_allclose(trained, plain(X * mask).data, rtol=1e-6, atol=1e-7)


def test_recurrent_dropout_masks_each_gate_of_inputs_and_state():
    """With ``recurrent_dropout`` Keras' cells run ``implementation=1``: a mask per gate on the inputs and on
    the carried state; a rate near 1 on the state leaves each gate only its input part after the first step."""
    layer, plain = _pair(keras.layers.LSTM, recurrent_dropout=0.5)
    np.testing.assert_array_equal(layer(X).data, plain(X).data)
    keras.utils.set_random_seed(2)
    first = layer(X, training=True).data
    keras.utils.set_random_seed(2)
    np.testing.assert_array_equal(layer(X, training=True).data, first)  # seeded
    assert not np.allclose(first, plain(X).data)
    keras.utils.set_random_seed(2)
    masks = [dropout_mask(keras.backend.rng(), (3, 3), 0.5).data for _ in range(4)]  # i, f, c, o
    np.testing.assert_allclose(first, _lstm_with_state_masks(layer.get_weights(), masks), rtol=1e-5, atol=1e-6)
    single_step = X[:, :1]  # one step: the state is zero, nothing to drop
    gru, plain_gru = _pair(keras.layers.GRU, single_step, recurrent_dropout=0.9999, reset_after=False)
    np.testing.assert_allclose(gru(single_step, training=True).data, plain_gru(single_step).data, rtol=1e-6)


def _lstm_with_state_masks(weights, masks):
    """Keras' LSTMCell, ``implementation=1``, in numpy: gate g's recurrent product is ``(h * masks[g]) @ R_g``."""
    kernel, recurrent, bias = weights
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h = c = np.zeros((X.shape[0], 3), np.float32)
    for t in range(X.shape[1]):
        z = [X[:, t] @ kernel[:, 3 * g : 3 * g + 3] + bias[3 * g : 3 * g + 3] for g in range(4)]
        z = [z[g] + (h * masks[g]) @ recurrent[:, 3 * g : 3 * g + 3] for g in range(4)]
        c = sigmoid(z[1]) * c + sigmoid(z[0]) * np.tanh(z[2])
        h = sigmoid(z[3]) * np.tanh(c)
    return h


@pytest.mark.parametrize("option", ["dropout", "recurrent_dropout"])
@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5])
def test_dropout_rates_outside_zero_to_one_are_refused(option, rate):
    with pytest.raises(ValueError, match=f"LSTM: {option} must be in \\[0, 1\\), got {rate}"):
        keras.layers.LSTM(2, **{option: rate})


def test_gru_reset_after_false_has_keras_one_bias_vector():
    layer = keras.layers.GRU(3, reset_after=False)
    layer(X)
    assert [w.shape for w in layer.weights] == [(4, 9), (3, 9), (9,)]
    assert layer.get_config()["reset_after"] is False


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: keras.layers.Bidirectional(keras.layers.LSTM(2), merge_mode="max"),
            "Invalid merge mode. Received: max",
        ),
        (lambda: keras.layers.Bidirectional("lstm"), "Please initialize `Bidirectional` layer with a"),
        (
            lambda: keras.layers.Bidirectional(keras.layers.LSTM(2), backward_layer=keras.layers.LSTM(2)),
            "Forward layer and backward layer should have different `go_backwards` value",
        ),
        (
            lambda: keras.layers.Bidirectional(
                keras.layers.LSTM(2), backward_layer=keras.layers.LSTM(2, go_backwards=True, return_sequences=True)
            ),
            'the same value for attribute "return_sequences"',
        ),
    ],
)
def test_bidirectional_refuses_what_keras_refuses(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bidirectional_round_trips_its_config_and_saves(tmp_path):
    backward = keras.layers.GRU(3, go_backwards=True, reset_after=False, name="back")
    layer = keras.layers.Bidirectional(
        keras.layers.GRU(3, reset_after=False), merge_mode="sum", backward_layer=backward
    )
    config = json.loads(json.dumps(layer.get_config()))
    assert config["layer"]["class_name"] == "GRU" and config["backward_layer"]["config"]["name"] == "back"
    assert keras.layers.Bidirectional.from_config(config).get_config() == config
    inputs = keras.Input((5, 4))
    model = keras.Model(inputs, keras.layers.Dense(2)(layer(inputs)))
    model.save(tmp_path / "bidirectional.keras")
    loaded = keras.models.load_model(tmp_path / "bidirectional.keras", compile=False)
    assert [w.name for w in loaded.weights] == [w.name for w in model.weights]
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_a_frozen_bidirectional_layer_freezes_both_directions():
    layer = keras.layers.Bidirectional(keras.layers.LSTM(2))
    layer(X)
    assert len(layer.trainable_weights) == 6
    layer.trainable = False
    assert layer.trainable_weights == [] and len(layer.non_trainable_weights) == 6


def _encoder_decoder():
    """A seq2seq shape: the encoder's states start nothing here, but are outputs beside the decoder's."""
    inputs = keras.Input((5, 4))
    sequence, h, c = keras.layers.LSTM(3, return_sequences=True, return_state=True)(inputs)
    last, state = keras.layers.GRU(3, return_state=True, reset_after=False)(sequence)
    return keras.Model(inputs, [keras.layers.Dense(3)(last), h, c, state])


def test_return_state_gives_the_last_states_as_further_outputs():
    layer = keras.layers.LSTM(3, return_state=True)
    output, h, c = layer(X)
    np.testing.assert_array_equal(output.data, h.data)  # without return_sequences the output is h
    assert c.shape == (3, 3) and not np.array_equal(c.data, h.data)
    sequence, state = keras.layers.GRU(2, return_sequences=True, return_state=True)(X)
    np.testing.assert_array_equal(sequence.data[:, -1], state.data)
    assert [t.shape for t in keras.layers.LSTM(3, return_state=True)(keras.Input((5, 4)))] == [(None, 3)] * 3


def test_a_model_with_states_as_outputs_round_trips_and_saves(tmp_path):
    model = _encoder_decoder()
    outputs = model.predict(X, verbose=0)
    assert [o.shape for o in outputs] == [(3, 3)] * 4
    config = json.loads(json.dumps(model.get_config()))
    assert config["output_layers"][1:3] == [["lstm", 0, 1], ["lstm", 0, 2]]  # Keras' tensor indices
    rebuilt = keras.Model.from_config(config)
    rebuilt.set_weights(model.get_weights())
    model.save(tmp_path / "states.keras")
    loaded = keras.models.load_model(tmp_path / "states.keras", compile=False)
    for made in (rebuilt, loaded):
        for mine, expected in zip(made.predict(X, verbose=0), outputs):
            np.testing.assert_array_equal(mine, expected)
    lines = []
    model.summary(print_fn=lines.append)
    assert any("lstm (LSTM)                     [(None, 5, 3), (None" in line for line in lines)  # cut as Keras


def test_a_multi_output_layer_cannot_join_a_sequential_model():
    with pytest.raises(ValueError, match="All layers in a Sequential model should have a single output tensor"):
        keras.Sequential([keras.layers.LSTM(2, return_state=True, input_shape=(5, 4))])


def test_return_state_trains_through_the_states_on_the_simulated_ipu():
    from keras_helpers import single_ipu_scope

    y = [np.full((3, 3), value, np.float32) for value in (0.0, 0.5, -0.5, 1.0)]  # all one shape: see the report
    keras.utils.set_random_seed(0)
    cpu = _encoder_decoder()
    cpu.compile(keras.optimizers.SGD(0.1), "mse")
    cpu.fit(X, y, batch_size=3, epochs=2, verbose=0)
    keras.utils.set_random_seed(0)
    with single_ipu_scope():
        on_ipu = _encoder_decoder()
        on_ipu.compile(keras.optimizers.SGD(0.1), "mse")
    on_ipu.fit(X, y, batch_size=3, epochs=2, verbose=0)
    for mine, theirs in zip(on_ipu.get_weights(), cpu.get_weights()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_bidirectional_with_return_state_is_refused_clearly():
    with pytest.raises(ValueError, match="does not simulate return_state=True in Bidirectional"):
        keras.layers.Bidirectional(keras.layers.LSTM(2, return_state=True))


def test_bidirectional_without_merge_mode_gives_both_directions():
    """``merge_mode=None``: the forward and the backward outputs, the halves of the concatenated ones."""
    concatenated = keras.layers.Bidirectional(keras.layers.LSTM(2, return_sequences=True))
    separate = keras.layers.Bidirectional(keras.layers.LSTM(2, return_sequences=True), merge_mode=None)
    concatenated(X), separate(X)
    separate.set_weights(concatenated.get_weights())
    forward, backward = separate(X)
    np.testing.assert_array_equal(np.concatenate([forward.data, backward.data], -1), concatenated(X).data)
    inputs = keras.Input((5, 4))
    assert [t.shape for t in separate(inputs)] == [(None, 5, 2), (None, 5, 2)]


def _rnn_classes():
    from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers

    return [keras.layers.LSTM, keras.layers.GRU, ipu_layers.PopnnLSTM]


@pytest.mark.parametrize("cls", _rnn_classes(), ids=lambda c: c.__name__)
def test_initial_state_continues_a_sequence_exactly_where_the_returned_state_left_it(cls):
    # Keras' initial_state: the second half of a sequence run from the first half's returned states is the whole
    # sequence's run (checked against tf-keras 2.21 for LSTM, GRU and PopnnLSTM to 1.2e-7 when written)
    keras.utils.set_random_seed(0)
    layer, first_part, second_part = (cls(3, return_sequences=True, return_state=True) for _ in range(3))
    whole, *states = layer(X)
    first_part(X[:, :2]), second_part(X[:, 2:])  # a layer keeps its first sequence length, as ipu-teach's do
    first_part.set_weights(layer.get_weights()), second_part.set_weights(layer.get_weights())
    first, *middle = first_part(X[:, :2])
    second, *end = second_part(X[:, 2:], initial_state=middle)
    np.testing.assert_allclose(np.concatenate([first.data, second.data], axis=1), whole.data, atol=1e-6)
    for got, want in zip(end, states):
        np.testing.assert_allclose(got.data, want.data, atol=1e-6)
    with pytest.raises(ValueError, match=f"initial_state needs {len(states)} state"):
        second_part(X[:, 2:], initial_state=middle * 2)


def test_a_shared_lstm_split_into_checkpointed_sections_trains_as_graphcores_recomputation_example_builds_it():
    # graphcore/examples recompute_lstm.py: Lambda slices of the input, one LSTM called on each from the previous
    # section's states, RecomputationCheckpoint on the (h, c) list; the same output as the LSTM on the whole input
    from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers

    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(4, 4))
    lstm = ipu_layers.PopnnLSTM(3, return_state=True)
    state, outputs = None, []
    for begin in (0, 2):
        part = keras.layers.Lambda(lambda x, b=0: x[:, b : b + 2, :], arguments={"b": begin})(inputs)
        output, h, c = lstm(part, initial_state=state)
        state = ipu_layers.RecomputationCheckpoint()([h, c])
        outputs.append(output)
    model = keras.Model(inputs, keras.layers.Concatenate(axis=1)(outputs))
    assert model.output_shape == (None, 6)
    whole = ipu_layers.PopnnLSTM(3)
    whole(X[:, :4])
    whole.set_weights(lstm.get_weights())
    np.testing.assert_allclose(model(X[:, :4]).data[:, 3:], whole(X[:, :4]).data, atol=1e-6)
    model.compile("sgd", "mse")
    before = lstm.get_weights()[0].copy()
    model.fit(X[:, :4], np.ones((3, 6), np.float32), verbose=0)
    assert not np.array_equal(lstm.get_weights()[0], before)  # the gradient reaches through the slices and states
