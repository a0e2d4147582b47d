"""The few TensorFlow 1 names TensorFlow 2 scripts for the IPU use: ``tensorflow.python.training.optimizer.Optimizer``
(subclassed to wrap a Keras optimizer), ``tf.compat.v1.get_default_graph().name``; the rest of TensorFlow 1
(sessions, its update rules) names itself as not simulated."""

import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach.not_simulated import NotSimulatedError
from ipu_teach.tensorflow.import_map import TensorFlowImports


def test_scripts_import_the_tensorflow_1_optimizer_base_and_compile_wraps_a_subclass_as_keras_does():
    with TensorFlowImports():
        namespace = {}
        exec("from tensorflow.python.training.optimizer import Optimizer", namespace)
        exec("import tensorflow as tf", namespace)
    base = namespace["Optimizer"]
    assert base is tf.compat.v1.train.Optimizer

    class Mine(base):
        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            pass

    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(Mine(False, "mine"), "mse")
    assert type(model.optimizer).__name__ == "TFOptimizer" and model.optimizer.optimizer.get_name() == "mine"
    assert model.optimizer.slots_per_weight == 0  # holding no Keras optimizer: costed as plain SGD
    with pytest.raises(NotSimulatedError, match=r"Optimizer.apply_gradients \(base\) is not simulated"):
        base(False, "base").apply_gradients([])
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        base(False, "")


def test_the_default_graph_is_named_only_where_tensorflow_would_be_building_one():
    assert tf.compat.v1.get_default_graph().name == ""  # called eagerly
    layer = keras.layers.Lambda(lambda x: x, name="probe")
    names = []

    class Recording(keras.layers.Layer):
        def call(self, inputs):
            names.append(tf.compat.v1.get_default_graph().name)
            return layer(inputs)

    Recording(name="recording").compute_output_shape((None, 3))
    assert names == ["recording_scratch_graph"]
    for name in ("Session", "placeholder"):
        with pytest.raises(NotSimulatedError, match=f"tf.compat.v1.{name} is not simulated"):
            getattr(tf.compat.v1, name)
    with pytest.raises(NotSimulatedError, match="tf.compat.v2 is not simulated"):
        tf.compat.v2  # noqa: B018
