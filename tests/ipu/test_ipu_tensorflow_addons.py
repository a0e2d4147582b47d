"""Graphcore's ipu_tensorflow_addons.keras.layers (graphcore/ipu_tensorflow_addons keras/layers): Keras' numbers,
Graphcore's arguments and refusals, PopLibs' way of computing an LSTM step, and the import under ipu-teach run."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.autograd import Tensor
from ipu_teach.autograd.function import record
from ipu_teach.ipu.ipu_tensorflow_addons.keras import layers as ipu_layers
from ipu_teach.not_simulated import NotSimulatedError, NotSimulatedImportError
from ipu_teach.tensorflow.import_map import TensorFlowImports

X = np.random.default_rng(0).normal(size=(3, 5, 4)).astype(np.float32)


def _same_weights(ipu_layer, keras_layer, x):
    ipu_layer(x), keras_layer(x)
    ipu_layer.set_weights(keras_layer.get_weights())


@pytest.mark.parametrize("return_sequences", [False, True])
def test_popnn_lstm_computes_keras_lstm_from_the_same_weights_values_and_gradients(return_sequences):
    keras.utils.set_random_seed(0)
    ipu_lstm, keras_lstm = ipu_layers.PopnnLSTM(6, return_sequences=return_sequences), keras.layers.LSTM(6)
    keras_lstm.return_sequences = return_sequences
    _same_weights(ipu_lstm, keras_lstm, X)
    outputs, grads = [], []
    for layer in (ipu_lstm, keras_lstm):
        x = Tensor(X, requires_grad=True)
        out = layer(x)
        out.sum().backward()
        outputs.append(out.data)
        grads.append([x.grad] + [w.grad for w in layer.trainable_weights])
    np.testing.assert_allclose(outputs[0], outputs[1], atol=1e-6)
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_popnn_lstm_multiplies_input_and_state_stacked_once_per_step_as_poplibs():
    """PopLibs' basicLstmUnitsNlInput: [x_t, h_{t-1}] x [W; U], one product per step (preCalcWeights off);
    Keras' LSTM projects the whole sequence first, then one recurrent product per step after the first."""
    steps, features, units = X.shape[1], X.shape[2], 6
    shapes = {}
    for name, layer in (("popnn", ipu_layers.PopnnLSTM(units)), ("keras", keras.layers.LSTM(units))):
        layer(X)
        with record() as tape:
            layer(X)
        shapes[name] = [r.input_shapes for r in tape if r.op == "MatMul"]
    assert shapes["popnn"] == [((3, features + units), (features + units, 4 * units))] * steps
    assert len(shapes["keras"]) == steps  # the sequence's projection, then steps - 1 recurrent products


def test_popnn_gru_and_time_major_follow_keras():
    keras.utils.set_random_seed(0)
    ipu_gru, keras_gru = ipu_layers.PopnnGRU(5, time_major=True, return_sequences=True), keras.layers.GRU(5)
    keras_gru.return_sequences = True
    batch_major = np.transpose(X, (1, 0, 2))  # X read time-major: 3 steps of a batch of 5
    ipu_gru(X), keras_gru(batch_major)
    ipu_gru.set_weights(keras_gru.get_weights())
    np.testing.assert_allclose(ipu_gru(X).data, np.transpose(keras_gru(batch_major).data, (1, 0, 2)), atol=1e-6)
    assert ipu_gru.compute_output_shape(X.shape) == (3, 5, 5)
    assert ipu_layers.GRU is ipu_layers.PopnnGRU and ipu_layers.LSTM is ipu_layers.PopnnLSTM


def test_popnn_lstm_dropout_drops_the_same_input_features_at_every_step():
    layer = ipu_layers.PopnnLSTM(2, dropout=0.5, dropout_seed=[1, 2])
    masked = layer._batch_major(Tensor(np.ones((4, 6, 8), np.float32)), training=True).data
    assert set(np.unique(masked).tolist()) == {0.0, 2.0}
    assert all(np.array_equal(masked[:, t], masked[:, 0]) for t in range(6))
    assert layer._batch_major(Tensor(np.ones((4, 6, 8), np.float32)), training=False).data.min() == 1.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"recurrent_dropout": 0.1}, "IPU custom LSTM layer does not support recurrent_dropout = 0.1"),
        ({"use_bias": False}, "IPU custom LSTM layer does not support use_bias = False"),
        ({"go_backwards": True}, "IPU custom LSTM layer does not support go_backwards = True"),
        ({"implementation": 3}, "IPU custom LSTM layer does not support implementation = 3"),
        ({"activation": "elu"}, "does not support 'elu' as an activation. Acceptable values are \"tanh\""),
        ({"recurrent_activation": "relu"}, "does not support 'relu' as a recurrent activation"),
    ],
)
def test_popnn_lstm_refuses_what_poplibs_does_not_do(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ipu_layers.PopnnLSTM(4, **kwargs)


@pytest.mark.parametrize("factor", [1, 2, 4])
def test_a_serialised_embedding_looks_up_and_learns_as_one_lookup(factor):
    keras.utils.set_random_seed(0)
    plain, serial = ipu_layers.Embedding(8, 3), ipu_layers.Embedding(8, 3, serialization_factor=factor)
    ids = np.array([[0, 7, 3, 3], [5, 1, 6, 2]])
    _same_weights(serial, plain, ids)
    results = []
    for layer in (plain, serial):
        out = layer(ids)
        (out * Tensor(np.arange(out.data.size, dtype=np.float32).reshape(out.shape))).sum().backward()
        results.append((out.data, layer.embeddings.grad))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_embedding_refuses_graphcores_unsupported_arguments_and_bad_factors():
    with pytest.raises(NotImplementedError, match="Embedding does not support __init__ argument mask_zero"):
        ipu_layers.Embedding(8, 2, mask_zero=True)
    with pytest.raises(ValueError, match=r"serialization_factor \(3\) must divide .* embeddings \(8\)"):
        ipu_layers.Embedding(8, 2, serialization_factor=3)
    with pytest.raises(ValueError, match="input shape should be a tensor of shape \\[batch, input_length\\]"):
        ipu_layers.Embedding(8, 2)(keras.Input(shape=(4, 2)))


def test_layer_normalization_and_dropout_are_keras_with_graphcores_arguments():
    x = np.random.default_rng(1).normal(size=(2, 6)).astype(np.float32)
    np.testing.assert_allclose(ipu_layers.LayerNormalization()(x).data, keras.layers.LayerNormalization()(x).data)
    with pytest.raises(NotImplementedError, match="LayerNormalization does not support __init__ argument gamma_reg"):
        ipu_layers.LayerNormalization(gamma_regularizer="l2")
    first, second = (ipu_layers.Dropout(0.5, seed=[3, 4])(np.ones((4, 4), np.float32), training=True) for _ in "ab")
    np.testing.assert_array_equal(first.data, second.data)  # the seed pair fixes the mask
    with pytest.raises(ValueError, match="seed must be None or a pair of 32-bit integers, got 7"):
        ipu_layers.Dropout(0.5, seed=7)


def test_a_recomputation_checkpoint_passes_its_input_through():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ipu_layers.RecomputationCheckpoint()(x).data, x)
    h, c = ipu_layers.RecomputationCheckpoint()([x, 2 * x])  # a list, as Graphcore's takes an LSTM's states
    np.testing.assert_array_equal(c.data, 2 * x)
    symbolic = ipu_layers.RecomputationCheckpoint()([keras.Input(shape=(3,)), keras.Input(shape=(5,))])
    assert [t.shape for t in symbolic] == [(None, 3), (None, 5)]


def test_scripts_import_the_layers_and_a_missing_one_is_named_as_not_simulated():
    with TensorFlowImports():
        import ipu_tensorflow_addons.keras.layers as addons
        from ipu_tensorflow_addons.keras.layers import LSTM, Embedding

        assert LSTM is ipu_layers.PopnnLSTM and Embedding is ipu_layers.Embedding
        with pytest.raises(NotSimulatedError, match="^ipu_tensorflow_addons.keras.layers.CTCLoss is not"):
            addons.CTCLoss  # noqa: B018 (the access is what raises)
        with pytest.raises(NotSimulatedImportError, match="^ipu_tensorflow_addons.keras.optimizers is not simulated"):
            exec("from ipu_tensorflow_addons.keras.optimizers import AdamIpuOptimizer", {})


@pytest.mark.parametrize("dimension", ["input_columns", "input_rows_kernel_columns", "kernel_rows"])
def test_serial_dense_computes_dense_in_factor_products_as_serialized_matmul(dimension):
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
    serial, dense = ipu_layers.SerialDense(8, 2, dimension, activation="relu"), keras.layers.Dense(8, activation="relu")
    _same_weights(serial, dense, x)
    results = []
    for layer in (serial, dense):
        with record() as tape:
            out = layer(Tensor(x))
        out.sum().backward()
        results.append((out.data, [w.grad for w in layer.trainable_weights], sum(r.op == "MatMul" for r in tape)))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-6)
    for a, b in zip(results[0][1], results[1][1], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert (results[0][2], results[1][2]) == (2, 1)


def test_serial_dense_refuses_a_factor_that_does_not_divide_and_an_unknown_dimension():
    with pytest.raises(
        ValueError, match=r"Expected 'serialization_factor' \(4\) to divide the rows dimension of 'b' \(6\)"
    ):
        ipu_layers.SerialDense(6, 4, "kernel_rows")(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="Invalid serialization_dimension=rows, expected one of: 'input_columns'"):
        ipu_layers.SerialDense(6, 2, "rows")


@pytest.mark.parametrize("layer", [ipu_layers.PopnnLSTM, keras.layers.GRU], ids=lambda c: c.__name__)
def test_an_rnns_timesteps_are_one_loop_compiled_once_and_run_every_step(layer):
    # on the IPU the timesteps are a loop (TensorFlow's while loop, PopLibs' Repeat): a longer sequence takes
    # longer to run, not to compile (recompute_lstm.py's LSTM compiled for 18 simulated minutes when every
    # timestep's compute sets were counted as code of their own)
    from ipu_test_helpers import configure

    from ipu_teach import ipu

    def executable(steps):
        configure(1)
        with ipu.ipu_strategy.IPUStrategy().scope():
            keras.utils.set_random_seed(0)
            model = keras.Sequential([layer(8, input_shape=(steps, 4)), keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(np.ones((8, steps, 4), np.float32), np.ones((8, 1), np.float32), batch_size=8, verbose=0)
        return model.get_ipu_executable("train")

    short, long = executable(8), executable(32)
    device_cycles = [sum(int(step.cycles.max()) for step in e.graph.steps) for e in (short, long)]
    assert device_cycles[1] > 3 * device_cycles[0]
    assert long.compile_seconds < 1.2 * short.compile_seconds  # only the products over the whole sequence grow

    def code(e, category):
        return max(int(item.per_tile.max()) for item in e.graph.memory if item.category == category)

    assert code(long, "control code") < 1.05 * code(short, "control code")  # the loop's code, once
    assert sum(step.compiled_earlier for step in long.graph.steps) > 0.9 * len(long.graph.steps) * 24 / 32


def test_identical_calls_of_one_lstm_in_a_forward_pass_are_outlined_and_compiled_once():
    # graphcore/examples recomputation_checkpoints: "the same length allows the compiler to use function outlining
    # for the identical shorter LSTMs": a third identical section adds run time, not compile time
    from ipu_test_helpers import configure

    from ipu_teach import ipu

    def executable(sections):
        configure(1)
        with ipu.ipu_strategy.IPUStrategy().scope():
            keras.utils.set_random_seed(0)
            inputs = keras.Input(shape=(4 * sections, 4))
            lstm, state, outputs = ipu_layers.PopnnLSTM(8, return_state=True), None, []
            for begin in range(0, 4 * sections, 4):
                part = keras.layers.Lambda(lambda x, b=0: x[:, b : b + 4], arguments={"b": begin})(inputs)
                output, h, c = lstm(part, initial_state=state)
                state, outputs = [h, c], outputs + [output]
            model = keras.Model(inputs, keras.layers.Dense(1)(keras.layers.Concatenate()(outputs)))
            model.compile("sgd", "mse")
            x = np.ones((8, 4 * sections, 4), np.float32)
            model.fit(x, np.ones((8, 1), np.float32), batch_size=8, verbose=0)
        return model.get_ipu_executable("train")

    two, three = executable(2), executable(3)
    assert three.compile_seconds < 1.05 * two.compile_seconds
    assert sum(s.compiled_earlier for s in three.graph.steps) > sum(s.compiled_earlier for s in two.graph.steps)
