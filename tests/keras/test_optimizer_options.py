"""Keras 2.6's optimizer options and names beyond the update rules (compared with tf-keras in
test_keras_goldens_training.py): the ``lr`` alias, the checks and their messages, schedules through ``fit``
and saving, the ``optimizer_v2`` and ``tf.optimizers`` module paths, and the cost on the simulated IPU."""

import warnings

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach.tensorflow.import_map import TensorFlowImports

NEW = ["Adadelta", "Adamax", "Nadam", "Ftrl"]


def test_lr_is_the_deprecated_name_of_learning_rate_with_keras_warning():
    with pytest.warns(UserWarning, match=r"^The `lr` argument is deprecated, use `learning_rate` instead\.$") as caught:
        optimizer = keras.optimizers.Adamax(lr=0.02)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert optimizer.learning_rate == optimizer.lr == 0.02
    optimizer.lr = 0.5
    assert optimizer.learning_rate == 0.5 and optimizer.get_config()["learning_rate"] == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.optimizers.Adamax(learning_rate=0.02)  # no warning without lr
    assert keras.optimizers.Adam.from_config({"lr": 0.3}).learning_rate == 0.3


@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda: keras.optimizers.SGD(momentun=0.9),
            TypeError,
            r"Unexpected keyword argument passed to optimizer: momentun\. "
            r"Allowed kwargs are clipnorm, clipvalue, lr, decay, global_clipnorm",
        ),
        (lambda: keras.optimizers.Adam(clipnorm=-1.0), ValueError, r"^Expected clipnorm >= 0, received: -1\.0$"),
        (lambda: keras.optimizers.Adam(decay=-0.1), ValueError, r"^Expected decay >= 0, received: -0\.1$"),
        (
            lambda: keras.optimizers.SGD(clipnorm=1.0, global_clipnorm=2.0),
            ValueError,
            r"^Cannot accept both `clipnorm` and `global_clipnorm`\. "
            r"Received: `clipnorm`=1\.0, `global_clipnorm`=2\.0\.$",
        ),
        (
            lambda: keras.optimizers.Nadam(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)),
            ValueError,
            r"The Nadam optimizer does not support tf\.keras\.optimizers\.LearningRateSchedules",
        ),
        (
            lambda: keras.optimizers.Ftrl(learning_rate_power=0.5),
            ValueError,
            r"^`learning_rate_power` needs to be negative or zero\. Received: learning_rate_power=0\.5\.$",
        ),
        (
            lambda: keras.optimizers.Ftrl(initial_accumulator_value=-1),
            ValueError,
            r"^`initial_accumulator_value` needs to be positive or zero\. Received: initial_accumulator_value=-1\.$",
        ),
        (
            lambda: keras.optimizers.Ftrl(l1_regularization_strength=-0.1),
            ValueError,
            r"^`l1_regularization_strength` needs to be positive or zero",
        ),
        (
            lambda: keras.optimizers.Adam("fast"),
            TypeError,
            r"Adam: learning_rate must be a number or a keras\.optimizers\.schedules\.LearningRateSchedule, got 'fast'",
        ),
        (
            lambda: keras.optimizers.schedules.PiecewiseConstantDecay([10], [0.1]),
            ValueError,
            r"The length of boundaries should be 1 less than the length of values\. "
            r"Received: boundaries=\[10\] of length 1",
        ),
        (
            lambda: keras.optimizers.get({"class_name": "Lion", "config": {}}),
            ValueError,
            r"Unknown optimizer: 'Lion'\. Choose one of SGD, Adam, RMSprop, Adagrad, Adadelta, Adamax, Nadam, Ftrl",
        ),
        (
            lambda: keras.optimizers.schedules.deserialize({"class_name": "Mine", "config": {}}),
            ValueError,
            r"Unknown learning rate schedule: 'Mine'\. Pass your LearningRateSchedule subclass in "
            r"custom_objects=\{'Mine': TheClass\}, or use one of CosineDecay, ExponentialDecay",
        ),
    ],
    ids=[
        "misspelt option",
        "negative clipnorm",
        "negative decay",
        "clipnorm and global_clipnorm",
        "Nadam with a schedule",
        "Ftrl positive power",
        "Ftrl negative accumulator",
        "Ftrl negative l1",
        "learning_rate a string",
        "PiecewiseConstantDecay lengths",
        "unknown optimizer class",
        "unknown schedule class",
    ],
)
def test_bad_arguments_are_refused_with_keras_wording(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_schedule_follows_the_optimizer_steps_through_fit_and_save(tmp_path):
    """The schedule is read at ``iterations`` before each step, across epochs; saved in the model's file as
    Keras writes it into the configuration, and loaded back so training goes on with the same rate."""
    x, y = tiny_classification(n=32)
    schedule = keras.optimizers.schedules.PiecewiseConstantDecay([3, 5], [0.5, 0.1, 0.0001])
    optimizer = keras.optimizers.SGD(schedule, clipnorm=1.0)
    keras.utils.set_random_seed(0)
    model = tiny_dense_model()
    model.compile(optimizer, "sparse_categorical_crossentropy")
    rates = []
    for _ in range(3):
        rates.append(float(optimizer.step_learning_rate()))
        model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    assert rates == pytest.approx([0.5, 0.5, 0.1])  # steps 0, 2, 4 (two per epoch)
    assert optimizer.get_config()["learning_rate"] == {
        "class_name": "PiecewiseConstantDecay",
        "config": {"boundaries": [3, 5], "values": [0.5, 0.1, 0.0001], "name": None},
    }
    model.save(tmp_path / "scheduled.keras")
    loaded = keras.models.load_model(tmp_path / "scheduled.keras")
    assert isinstance(loaded.optimizer.learning_rate, keras.optimizers.schedules.PiecewiseConstantDecay)
    assert loaded.optimizer.get_config() == optimizer.get_config()
    for m in (model, loaded):
        m.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NEW)
def test_new_optimizers_by_name_train_and_save_their_slots(name, tmp_path):
    """compile("adamax") etc.; their two slots per weight are saved, so training continues as if never stopped."""
    x, y = tiny_classification(n=32)
    keras.utils.set_random_seed(0)
    model = tiny_dense_model()
    model.compile(name.lower(), "sparse_categorical_crossentropy")
    assert type(model.optimizer).__name__ == name
    model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    assert loaded.optimizer.iterations == 2 and len(loaded.optimizer._slots) == 2 * len(model.weights)
    for m in (model, loaded):
        m.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_keras_module_paths_of_the_optimizers():
    """Graphcore's Keras code imports ``keras.optimizer_v2.*`` (graphcore/keras: ``from keras.optimizer_v2 import
    gradient_descent``, ``optimizer_v2.OptimizerV2``, ``learning_rate_schedule``); TensorFlow 2.6 has
    ``tf.optimizers`` and ``tf.keras.optimizers.schedules``."""
    with TensorFlowImports():
        import tensorflow
        from keras.optimizer_v2 import gradient_descent, learning_rate_schedule, optimizer_v2
        from keras.optimizer_v2.adamax import Adamax
        from tensorflow.keras.optimizers.schedules import LearningRateSchedule, PolynomialDecay
        from tensorflow.python.keras.optimizer_v2.ftrl import Ftrl

        assert gradient_descent.SGD is keras.optimizers.SGD and Adamax is keras.optimizers.Adamax
        assert Ftrl is keras.optimizers.Ftrl and optimizer_v2.OptimizerV2 is keras.optimizers.Optimizer
        assert learning_rate_schedule.PolynomialDecay is PolynomialDecay is keras.optimizers.schedules.PolynomialDecay
        assert LearningRateSchedule is keras.optimizers.schedules.LearningRateSchedule
        assert tensorflow.optimizers.Nadam is keras.optimizers.Nadam
        assert tensorflow.keras.optimizers.schedules.CosineDecay is keras.optimizers.schedules.CosineDecay
    assert tf.optimizers.Adadelta is keras.optimizers.Adadelta


def test_a_clipped_step_is_the_clipped_gradient_step():
    """SGD with clipnorm: the step is lr times the gradient scaled to the norm; global_clipnorm scales all
    gradients by one factor; clipvalue cuts each value."""
    grads = [np.array([3.0, 4.0], np.float32), np.array([12.0], np.float32)]
    for options, expected in [
        ({"clipnorm": 1.0}, [-0.6, -0.8, -1.0]),
        ({"global_clipnorm": 1.0}, [-3 / 13, -4 / 13, -12 / 13]),
        ({"clipvalue": 3.5}, [-3.0, -3.5, -3.5]),
    ]:
        weights = [tf.Variable(np.zeros(2, np.float32)), tf.Variable(np.zeros(1, np.float32))]
        keras.optimizers.SGD(1.0, **options).apply_gradients(zip(grads, weights))
        np.testing.assert_allclose(np.concatenate([w.numpy() for w in weights]), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "callback",
    [keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr), keras.callbacks.ReduceLROnPlateau("loss")],
    ids=["LearningRateScheduler", "ReduceLROnPlateau"],
)
def test_a_per_epoch_learning_rate_callback_refuses_a_schedule(callback):
    """Both would set the learning rate: the callback says so instead of failing inside the user's function."""
    x, y = tiny_classification(n=16)
    model = tiny_dense_model()
    model.compile(keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5)), "mse")
    with pytest.raises(
        ValueError,
        match=rf"{type(callback).__name__}: the optimizer's learning_rate is a "
        r"ExponentialDecay schedule, which sets the rate at every step",
    ):
        model.fit(x, keras.utils.to_categorical(y, 3), batch_size=8, epochs=1, verbose=0, callbacks=[callback])


def test_fp16_gradients_are_clipped_in_fp32_arithmetic():
    """A norm of 3000 squares to 9e6, beyond fp16's 65504: clipped in fp32 (the arithmetic of fp16 weights'
    updates), the step is the gradient scaled to the norm, not zero or NaN."""
    weight = tf.Variable(np.zeros(2, np.float16))
    keras.optimizers.SGD(1.0, clipnorm=1.0).apply_gradients([(np.array([1800.0, 2400.0], np.float16), weight)])
    np.testing.assert_allclose(weight.numpy(), [-0.6, -0.8], rtol=1e-3)
    assert weight.numpy().dtype == np.float16


class HalvingEveryStep(keras.optimizers.schedules.LearningRateSchedule):
    def __call__(self, step):
        return 0.1 * 0.5**step

    def get_config(self):
        return {}


def test_a_schedule_of_ones_own_is_loaded_from_custom_objects(tmp_path):
    """As Keras' load_model: the schedule's class is named in the file and found in custom_objects."""
    x, y = tiny_classification(n=16)
    model = tiny_dense_model()
    model.compile(keras.optimizers.Adam(HalvingEveryStep()), "sparse_categorical_crossentropy")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    model.save(tmp_path / "own.keras")
    with pytest.raises(
        ValueError,
        match=r"Unknown learning rate schedule: 'HalvingEveryStep'\. Pass your "
        r"LearningRateSchedule subclass in custom_objects=\{'HalvingEveryStep': TheClass\}",
    ):
        keras.models.load_model(tmp_path / "own.keras")
    loaded = keras.models.load_model(tmp_path / "own.keras", custom_objects={"HalvingEveryStep": HalvingEveryStep})
    assert isinstance(loaded.optimizer.learning_rate, HalvingEveryStep)
    assert loaded.optimizer.step_learning_rate() == model.optimizer.step_learning_rate() == 0.1 * 0.5**2
