"""tf.GradientTape and the custom training loop on the CPU: the gradients are the autograd's (checked against
finite differences), and a loop of tape.gradient + apply_gradients ends with exactly the weights fit gives."""

import numpy as np
import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach.autograd import Tensor


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    return keras.Sequential(
        [keras.layers.Dense(8, activation="relu", input_shape=(6,)), keras.layers.Dense(3, activation="softmax")]
    )


def _data(n=64, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return x, ((x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_custom_loop_ends_with_exactly_the_weights_fit_gives(optimizer):
    x, y = _data()
    fitted = _model()
    fitted.compile(keras.optimizers.get(optimizer), "sparse_categorical_crossentropy")
    fitted.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)

    model, loss_fn = _model(), keras.losses.SparseCategoricalCrossentropy()
    opt = keras.optimizers.get(optimizer)
    for _ in range(2):
        for start in range(0, len(x), 16):
            with tf.GradientTape() as tape:
                loss = loss_fn(y[start : start + 16], model(x[start : start + 16], training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
    for mine, theirs in zip(model.get_weights(), fitted.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    assert opt.iterations == 8


def test_tf_functions_on_a_loss_keep_its_gradient_as_the_keras_loss_object_does():
    x, y = _data(16)
    model = _model()
    with tf.GradientTape(persistent=True) as tape:
        predictions = model(x, training=True)
        mean_of_losses = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, predictions))
        loss_object = keras.losses.SparseCategoricalCrossentropy()(y, predictions)
    for a, b in zip(
        tape.gradient(mean_of_losses, model.trainable_variables), tape.gradient(loss_object, model.trainable_variables)
    ):
        np.testing.assert_allclose(a, b, rtol=1e-6)
        assert isinstance(a, tf.Tensor)
    assert all(w.grad is None for w in model.trainable_variables)  # the tape leaves the model's grads alone


def _finite_difference(f, variable, eps=1e-3):
    grad = np.zeros(variable.shape)
    for index in np.ndindex(variable.shape):
        saved = variable.data[index]
        variable.data[index] = saved + eps
        up = float(f())
        variable.data[index] = saved - eps
        down = float(f())
        variable.data[index] = saved
        grad[index] = (up - down) / (2 * eps)
    return grad


def test_tape_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(4, 3)), dtype=tf.float64)
    b = tf.Variable(rng.normal(size=(3,)), dtype=tf.float64)
    x = rng.normal(size=(5, 4))

    def f():
        hidden = tf.tanh(tf.add(tf.matmul(x, w), b))
        return tf.reduce_mean(tf.square(hidden) + tf.exp(tf.sigmoid(hidden)) / 2.0)

    with tf.GradientTape() as tape:
        loss = f()
    grads = tape.gradient(loss, {"w": w, "b": b})
    np.testing.assert_allclose(grads["w"], _finite_difference(f, w), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(grads["b"], _finite_difference(f, b), rtol=1e-5, atol=1e-8)


def test_watch_persistent_and_nested_sources():
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    v = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tf.reduce_sum(x * x) * v
    grads = tape.gradient(y, [x, (v,)])
    np.testing.assert_allclose(grads[0], [4.0, 8.0, 12.0])
    assert isinstance(grads[1], tuple) and float(grads[1][0]) == 14.0
    np.testing.assert_allclose(tape.gradient(y, x), [4.0, 8.0, 12.0])  # persistent: asked again


def test_a_second_gradient_of_a_tape_that_is_not_persistent_fails_as_in_tensorflow():
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = v * v
    assert float(tape.gradient(y, v)) == 4.0
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to compute one set"):
        tape.gradient(y, v)


def test_unconnected_sources_get_none_or_zeros():
    used, unused = tf.Variable(1.0), tf.Variable([1.0, 1.0])
    with tf.GradientTape(persistent=True) as tape:
        y = used * 3.0
    assert tape.gradient(y, [used, unused])[1] is None
    np.testing.assert_array_equal(tape.gradient(y, unused, unconnected_gradients="zero"), [0.0, 0.0])


def test_a_target_computed_with_numpy_says_the_gradient_was_cut():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = np.sum(np.asarray(v) ** 2)
    with pytest.raises(ValueError, match="carries no gradient: it was computed with numpy"):
        tape.gradient(y, v)


def test_a_tf_function_with_no_differentiable_op_refuses_a_tensor_that_needs_a_gradient():
    v = tf.Variable([1.0, 4.0])
    with pytest.raises(ValueError, match="tf.sqrt is not differentiable in ipu-teach"):
        tf.sqrt(v)
    np.testing.assert_array_equal(tf.sqrt(np.array([4.0])), [2.0])  # numpy values: as before


def test_watching_a_constant_says_to_use_a_variable():
    with tf.GradientTape() as tape, pytest.raises(ValueError, match=r"make it a tf.Variable\(value\)"):
        tape.watch(tf.constant(3.0))


def test_variables_assign_in_place_and_metrics_reset_states():
    v = tf.Variable([1.0, 2.0], name="v")
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])
    with pytest.raises(ValueError, match=r"cannot assign a value of shape \(3,\) to a variable of shape \(2,\)"):
        v.assign([1.0, 2.0, 3.0])
    metric = keras.metrics.SparseCategoricalAccuracy()
    metric.update_state([0, 1], Tensor(np.array([[0.9, 0.1], [0.8, 0.2]], np.float32)))
    assert metric.result() == 0.5
    metric.reset_states()
    assert metric.result() == 0.0


def test_tf_nn_losses_and_activations_match_finite_differences_and_numpy():
    rng = np.random.default_rng(2)
    logits = tf.Variable(rng.normal(size=(4, 5)) * 3, dtype=tf.float64)
    labels = rng.integers(0, 5, 4)
    one_hot = np.eye(5)[rng.integers(0, 5, 4)]

    def f():
        return (
            tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
            + tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels=one_hot, logits=logits))
            + tf.reduce_sum(tf.nn.relu(logits) * tf.nn.softmax(logits))
            + tf.reduce_mean(tf.nn.log_softmax(logits))
            + tf.nn.l2_loss(tf.nn.bias_add(logits, np.ones(5)))
        )

    with tf.GradientTape() as tape:
        loss = f()
    np.testing.assert_allclose(tape.gradient(loss, logits), _finite_difference(f, logits), rtol=1e-5, atol=1e-7)
    values = np.asarray(logits)
    expected = values - values.max(-1, keepdims=True)
    expected -= np.log(np.exp(expected).sum(-1, keepdims=True))
    np.testing.assert_allclose(tf.nn.log_softmax(values), expected)
    assert isinstance(tf.nn.relu(values), tf.Tensor) and not isinstance(tf.nn.relu(values), Tensor)
    with pytest.raises(ValueError, match=r"labels of shape \(3,\) need the shape of logits without its last axis"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2], logits=values)
    with pytest.raises(ValueError, match=r"tf.nn.softmax: ipu-teach computes it over the last axis only"):
        tf.nn.softmax(values, axis=0)


def test_calling_a_metric_updates_it_and_its_result_answers_numpy_as_in_keras():
    x, y = _data(16)
    model, train_loss = _model(), keras.metrics.Mean(name="train_loss")
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    predictions = model(x, training=True)
    loss = keras.losses.SparseCategoricalCrossentropy()(y, predictions)
    assert train_loss(loss) == pytest.approx(float(loss.data))
    assert accuracy(y, predictions) == accuracy.result()
    assert (
        accuracy.result().numpy().dtype == np.float32
        and f"{accuracy.result():.2f}" == f"{float(accuracy.result()):.2f}"
    )


def test_strategy_reduce_and_tf_distribute():
    from ipu_teach import ipu

    strategy = ipu.ipu_strategy.IPUStrategy()
    assert strategy.reduce(tf.distribute.ReduceOp.SUM, np.array([1.0, 2.0]), axis=0) == 3.0
    assert strategy.reduce("MEAN", np.array([1.0, 2.0]), axis=0) == 1.5
    np.testing.assert_array_equal(strategy.reduce(tf.distribute.ReduceOp.MEAN, np.array([1.0, 2.0])), [1.0, 2.0])
    assert strategy.experimental_local_results(7) == (7,)
    dataset = tf.data.Dataset.range(4)
    assert strategy.experimental_distribute_dataset(dataset) is dataset
    with pytest.raises(ValueError, match="reduce_op must be tf.distribute.ReduceOp.SUM or MEAN, got 'MAX'"):
        strategy.reduce("MAX", 1.0)
    assert not tf.distribute.has_strategy()
    with strategy.scope():
        assert tf.distribute.get_strategy() is strategy
    with pytest.raises(AttributeError, match="tf.distribute.MirroredStrategy is not simulated"):
        tf.distribute.MirroredStrategy  # noqa: B018 (the attribute lookup is what fails)


def test_a_second_derivative_says_there_are_none():
    x = tf.Variable(3.0)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = x * x * x
        dy_dx = inner.gradient(y, x)
    assert float(dy_dx) == 27.0
    with pytest.raises(ValueError, match="or it is a gradient \\(ipu-teach has no second derivatives\\)"):
        outer.gradient(dy_dx, x)
