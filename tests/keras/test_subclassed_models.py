"""Models written as classes (``keras.Model`` with ``__init__`` and ``call``) and layers of one's own, as Keras
runs them: built on first call, layers tracked from attributes, the call context's ``training``, ``Lambda``;
against tf-keras (golden/subclassed.json, written by tools/make_keras_goldens.py) where Keras defines the values."""

import json
import pathlib

import golden_models
import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import tensorflow as tf

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "subclassed.json").read_text())


Block, Net, DoubledLoss = golden_models.classes(keras, tf)


def golden_net(case="fit", cls=Net):
    keras.backend.clear_session()
    model = cls()
    model(np.asarray(GOLDEN["x"], np.float32)[:1])
    model.set_weights([np.asarray(w, np.float32) for w in GOLDEN["cases"][case]["weights"]])
    return model


def golden_data():
    return np.asarray(GOLDEN["x"], np.float32), np.asarray(GOLDEN["y"])


def test_the_model_is_built_on_its_first_call_with_the_layers_its_attributes_hold():
    keras.backend.clear_session()
    model = Net()
    assert (model.built, model.weights, model.layers[1].name) == (False, [], "block")  # listed before built
    model(np.ones((2, 4), np.float32))
    case = GOLDEN["cases"]["fit"]
    assert model.built and [layer.name for layer in model.layers] == case["layers"]
    # Keras' order: each layer's (a layer's own weights before its sublayers'), trainable first within a layer
    assert [w.name.rsplit("/", 1)[1] for w in model.weights] == [n.rsplit("/", 1)[1] for n in case["weight_names"]]
    assert [w.name.rsplit("/", 1)[1] for w in model.trainable_variables] == [
        n.rsplit("/", 1)[1] for n in case["trainable_names"]
    ]
    assert model.count_params() == 259 and model.output_names == ["output_1"]


def _rows(lines):
    """(layer name, output shape, params) of each layer row of a summary, and its three totals."""
    rows = [(line.split()[0], "multiple", line.split()[-1]) for line in lines if " multiple " in line]
    totals = [line.split(" (")[0] for line in lines if line.split(":")[0].endswith("params")]
    return rows, totals


def test_summary_lists_each_layer_as_multiple_as_keras_does():
    model = golden_net()
    lines = []
    model.summary(print_fn=lines.append)
    assert lines[0] == 'Model: "net"'
    assert _rows(lines) == _rows(GOLDEN["cases"]["fit"]["summary"])
    assert not any("Connected to" in line for line in lines)


def fit_as_the_golden(case, cls=Net):
    """The golden's model of ``cls`` fitted as tf-keras fitted it; its history and evaluation checked against Keras'."""
    model = golden_net(case, cls)
    x, y = golden_data()
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
    expected = GOLDEN["cases"][case]
    for name in ("loss", "accuracy"):
        np.testing.assert_allclose(history.history[name], expected["history"][name], rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(x, y, batch_size=16, verbose=0), expected["evaluate"], rtol=1e-5)
    return model


def test_fit_evaluate_and_predict_from_keras_weights_give_keras_numbers():
    """The call context gives the BatchNormalization, called without training, fit's True and predict's False."""
    model = fit_as_the_golden("fit")
    x, _ = golden_data()
    np.testing.assert_allclose(model.predict(x[:4], verbose=0), GOLDEN["cases"]["fit"]["predict"], rtol=1e-5, atol=1e-7)


def test_a_subclassed_model_trains_as_the_functional_model_of_the_same_layers():
    x, y = golden_data()
    net = golden_net()
    inputs = keras.Input(shape=(4,))
    h = inputs
    for layer in net.layers:
        h = layer(h)
    functional = keras.Model(inputs, h)  # the same layer objects: start from the same weights
    start = net.get_weights()
    histories = []
    for model in (net, functional):
        model.set_weights(start)
        model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", metrics=["accuracy"])
        histories.append(model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history)
    assert histories[0] == histories[1]


def test_unbuilt_models_say_how_to_build_them_and_build_takes_a_shape():
    model = Net()
    with pytest.raises(ValueError, match=r"This model has not yet been built. Build the model first by calling `build"):
        model.summary()
    with pytest.raises(ValueError, match="Call the Model first, then load the weights"):
        model.load_weights("weights.npz")
    with pytest.raises(ValueError, match="You must provide an `input_shape` argument"):
        model.build()
    with pytest.raises(ValueError, match="Specified input shape is not one of the valid types"):
        model.build(4)
    assert model.built is False and model.weights == []
    model.build((None, 4))
    assert model.built and model.count_params() == 259
    assert model.predict(np.ones((3, 4), np.float32), verbose=0).shape == (3, 3)


def test_save_weights_and_load_weights_into_a_new_instance(tmp_path):
    model = golden_net()
    x, _ = golden_data()
    model.save_weights(tmp_path / "net.npz")
    other = Net()
    other(x[:1])
    other.load_weights(tmp_path / "net.npz")
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(NotImplementedError, match="subclassed model.*use model.save_weights"):
        model.save(tmp_path / "net.keras")
    assert not (tmp_path / "net.keras").exists()


class TwoOutputs(keras.Model):
    def __init__(self):
        super().__init__()
        self.a, self.b = keras.layers.Dense(2), keras.layers.Dense(1)

    def call(self, inputs):
        return [self.a(inputs), self.b(inputs)]


def test_several_outputs_are_named_output_1_output_2_as_in_keras():
    model = TwoOutputs()
    model.compile("sgd", ["mse", "mse"])
    x = np.ones((8, 3), np.float32)
    history = model.fit(x, [np.zeros((8, 2)), np.zeros((8, 1))], batch_size=4, verbose=0)
    assert sorted(history.history) == ["loss", "output_1_loss", "output_2_loss"]
    assert model.output_shape == [(None, 2), (None, 1)]


class Dropping(keras.Model):
    """Dropout called without ``training``: it takes fit's (True) and predict's (False) from the call context."""

    def __init__(self):
        super().__init__()
        self.drop = keras.layers.Dropout(0.5)

    def call(self, inputs):
        return self.drop(inputs)


def test_a_layer_called_without_training_takes_the_enclosing_calls():
    model = Dropping()
    x = np.ones((100, 20), np.float32)
    np.testing.assert_array_equal(model(x).data, x)
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    assert set(np.unique(model(x, training=True).data)) == {0.0, 2.0}
    assert set(np.unique(model.drop(x, training=False).data)) == {1.0}  # the layer's own value wins


class Positional(keras.layers.Layer):
    """``training`` without a default: Keras passes False outside fit."""

    def call(self, inputs, training):
        return inputs * (2.0 if training else 1.0)


class Defaulted(keras.layers.Layer):
    """``training=None``: Keras passes the layer's default, None, where nothing says."""

    def call(self, inputs, training=None):
        return inputs * {None: 3.0, True: 2.0, False: 1.0}[training]


def test_training_is_passed_only_to_a_call_that_takes_it_with_keras_defaults():
    x = np.ones((1, 2), np.float32)
    assert Positional()(x).data.tolist() == [[1.0, 1.0]]
    assert Positional()(x, training=True).data.tolist() == [[2.0, 2.0]]
    assert Defaulted()(x).data.tolist() == [[3.0, 3.0]]
    assert Defaulted()(x, training=False).data.tolist() == [[1.0, 1.0]]
    assert Block(2)(x).shape == (1, 2)  # call(self, inputs): no training given


def test_tracking_follows_the_attributes_and_freezing_reaches_the_sublayers():
    block = Block(3)
    block(np.ones((1, 2), np.float32))
    assert [w.name.split("/")[-1] for w in block.weights] == ["scale:0", "kernel:0", "bias:0"]
    block.trainable = False
    assert block.trainable_weights == [] and block.inner.trainable is False and len(block.non_trainable_weights) == 3
    block.trainable = True
    block.spare = block.inner  # the same layer twice is one layer
    assert len(block.weights) == 3
    del block.spare
    block.inner = None  # no longer a layer: no longer tracked
    assert [w.name.split("/")[-1] for w in block.weights] == ["scale:0"]


class Pair(keras.layers.Layer):
    """A layer of one's own called on a list, as Keras' layers may be."""

    def call(self, inputs):
        first, second = inputs
        return first * second


def test_a_layer_of_ones_own_takes_a_list_eagerly_and_in_a_functional_model():
    a, b = keras.Input(shape=(3,)), keras.Input(shape=(3,))
    out = Pair()([keras.layers.Dense(3)(a), b])
    assert out.shape == (None, 3)
    model = keras.Model([a, b], out)
    assert model.predict([np.ones((2, 3)), np.zeros((2, 3))], verbose=0).tolist() == [[0.0] * 3] * 2
    assert Pair()([np.full((1, 2), 2.0), np.full((1, 2), 3.0)]).data.tolist() == [[6.0, 6.0]]


def test_lambda_wraps_a_function_of_tensors_with_its_arguments():
    x = keras.Input(shape=(4,))
    scaled = keras.layers.Lambda(lambda t, factor: t * factor, arguments={"factor": 3.0})(x)
    mean = keras.layers.Lambda(lambda t: tf.reduce_mean(t, axis=1, keepdims=True), name="mean")(scaled)
    pair = keras.layers.Lambda(lambda ts: ts[0] - ts[1], output_shape=(4,))([scaled, x])
    model = keras.Model(x, [mean, pair])
    assert model.output_shape == [(None, 1), (None, 4)] and model.count_params() == 0
    got_mean, got_pair = model.predict(np.arange(8, dtype=np.float32).reshape(2, 4), verbose=0)
    np.testing.assert_allclose(got_mean, [[4.5], [16.5]])
    np.testing.assert_allclose(got_pair, [[0, 2, 4, 6], [8, 10, 12, 14]])
    noisy = keras.layers.Lambda(lambda t, training: t + (1.0 if training else 0.0))
    assert noisy(np.zeros((1, 1)), training=True).data.tolist() == [[1.0]] and noisy(np.zeros((1, 1))).data == 0


def test_lambda_refuses_what_it_cannot_do():
    with pytest.raises(TypeError, match="Lambda: function must be callable"):
        keras.layers.Lambda("relu")
    with pytest.raises(ValueError, match=r"Lambda\(mask=...\) is not simulated"):
        keras.layers.Lambda(lambda t: t, mask=lambda t, m: m)


class WithTfOps(keras.Model):
    """A call that applies tf ops to the tensors: it cannot be traced on keras.Input, and still runs."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, inputs):
        return tf.nn.sigmoid(tf.matmul(self.dense(inputs), tf.constant([[0.0, 1.0], [1.0, 0.0]])))


def test_a_call_with_tf_ops_trains_untraced():
    model = WithTfOps()
    model.compile("sgd", "categorical_crossentropy")
    x = np.ones((8, 3), np.float32)
    model.fit(x, np.eye(2)[[0, 1] * 4], batch_size=4, verbose=0)
    assert model.traced is False and model.trace_error


def test_a_train_step_of_ones_own_trains_as_keras_runs_it():
    assert fit_as_the_golden("train_step", DoubledLoss).optimizer.iterations == 12


class Autoencoder(keras.Model):
    """Compiled without a loss, fitted without labels: its steps make their own loss and logs."""

    def __init__(self):
        super().__init__()
        self.code, self.decode = keras.layers.Dense(2), keras.layers.Dense(4)

    def call(self, inputs):
        return self.decode(self.code(inputs))

    def train_step(self, data):
        x, _, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        with tf.GradientTape() as tape:
            error = tf.reduce_mean(tf.square(self(x, training=True) - x))
        self.optimizer.apply_gradients(zip(tape.gradient(error, self.trainable_variables), self.trainable_variables))
        return {"reconstruction": error, "weighted": sample_weight is not None}

    def test_step(self, data):
        x = data[0]
        return {"reconstruction": tf.reduce_mean(tf.square(self(x) - x))}

    def predict_step(self, data):
        return self(data[0]) * 0.0


def test_steps_of_ones_own_give_the_logs_history_and_predictions():
    x = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
    model = Autoencoder()
    model.compile(keras.optimizers.Adam(0.05))
    history = model.fit(x, epochs=5, batch_size=8, verbose=0)
    assert sorted(history.history) == ["reconstruction", "weighted"] and history.history["weighted"] == [0.0] * 5
    losses = history.history["reconstruction"]
    assert losses[-1] < losses[0]
    last_batch = model.test_step((x[24:],))["reconstruction"].data  # as in Keras: the logs of the last step
    assert model.evaluate(x, batch_size=8, verbose=0) == pytest.approx(float(last_batch))
    assert model.evaluate(x, return_dict=True, verbose=0).keys() == {"reconstruction"}
    assert not model.predict(x, verbose=0).any()
    assert model.fit(x, x[:, 0], sample_weight=np.ones(32), verbose=0).history["weighted"] == [1.0]


class NoLogs(Net):
    def train_step(self, data):
        return None


def test_a_train_step_must_return_its_logs():
    model = NoLogs()
    model.compile("sgd", "mse")
    with pytest.raises(TypeError, match=r"NoLogs.train_step returned NoneType: it should return a dict of logs"):
        model.fit(np.ones((4, 4)), np.ones((4, 3)), verbose=0)


class PassesSelf(keras.Model):
    """As Graphcore's documentation example (keras_tf2_example11.py) writes it: ``super().__init__(self)``."""

    def __init__(self):
        super().__init__(self)
        self.dense = keras.layers.Dense(2)

    def call(self, inputs):
        return self.dense(inputs)


def test_a_lone_positional_argument_to_a_subclass_init_is_ignored_as_keras_ignores_it():
    model = PassesSelf()
    assert model.subclassed and model(np.ones((1, 3), np.float32)).shape == (1, 2)
    inputs = keras.Input(shape=(3,))
    with pytest.raises(ValueError, match=r"keras.Model\(inputs, outputs\) needs both inputs and outputs"):
        keras.Model(inputs)  # a plain Model given only its inputs is still told what is missing


@pytest.mark.parametrize("cls", [PassesSelf, WithTfOps], ids=["layers only", "tf ops"])
def test_a_subclassed_model_is_a_layer_of_a_functional_model(cls):
    inputs = keras.Input(shape=(3,))
    inner = cls()
    first = inner(inputs)
    model = keras.Model(inputs, keras.layers.Dense(1)(first))
    assert first.shape == (None, 2) and model.count_params() == inner.count_params() + 3
    model.compile("sgd", "mse")
    before = [w.copy() for w in inner.get_weights()]
    model.fit(np.ones((8, 3), np.float32), np.ones((8, 1), np.float32), verbose=0)
    assert any(not np.array_equal(a, b) for a, b in zip(before, inner.get_weights()))  # trained through it
