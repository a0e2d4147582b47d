"""A model written as a class runs on the simulated IPU as the functional model of the same layers: the same
numbers and the same simulated time with steps_per_execution, replicas and gradient accumulation; pipelined
by PipelineStage blocks inside its call or by set_pipeline_stage_assignment once built, with Graphcore's
Keras' errors before it is built (keras/ipu/extensions/model_extensions.py)."""

import numpy as np
import pytest
from helpers.models import compile_model
from ipu_test_helpers import CLASSES, FEATURES, build, configure, data

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach import tensorflow as tf
from ipu_teach.not_simulated import NotSimulatedError


class Net(keras.Model):
    """ipu_test_helpers.build's layers, written as a class."""

    def __init__(self, stages=False):
        super().__init__()
        self.stages = stages
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(CLASSES, activation="softmax")

    def call(self, inputs, training=None):
        if not self.stages:
            return self.out(self.hidden(inputs))
        with keras.ipu.PipelineStage(0):
            x = self.hidden(inputs)
        with keras.ipu.PipelineStage(1):
            return self.out(x)


def pipelined_functional():
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(FEATURES,))
    with keras.ipu.PipelineStage(0):
        x = keras.layers.Dense(8, activation="relu")(inputs)
    with keras.ipu.PipelineStage(1):
        outputs = keras.layers.Dense(CLASSES, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def like(reference, model):
    """``model`` built and given ``reference``'s weights."""
    model.build((None, FEATURES))
    model.set_weights(reference.get_weights())
    return model


def train_both(reference, model, steps_per_execution, batch_size=16):
    x, y = data(256)
    for m in (reference, model):
        compile_model(m, steps_per_execution)
    histories = [
        m.fit(x, y, batch_size=batch_size, epochs=2, shuffle=False, verbose=0).history for m in (reference, model)
    ]
    executables = [m.get_ipu_executable("train") for m in (reference, model)]
    return histories, executables


@pytest.mark.parametrize("replicas, accumulation", [(1, None), (2, 2)])
def test_a_subclassed_model_trains_like_the_functional_model_in_numbers_and_simulated_time(replicas, accumulation):
    configure(replicas)
    with ipu.ipu_strategy.IPUStrategy().scope():
        reference, model = build(0), Net()
        like(reference, model)
        for m in (reference, model):
            if accumulation:
                m.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=accumulation)
    (ours, theirs), (mine, its) = train_both(reference, model, steps_per_execution=4)
    assert ours == theirs
    assert mine.seconds_per_execution == its.seconds_per_execution and mine.compile_seconds == its.compile_seconds
    x, y = data(64, seed=5)
    assert model.evaluate(x, y, batch_size=16, verbose=0) == reference.evaluate(x, y, batch_size=16, verbose=0)
    np.testing.assert_array_equal(
        model.predict(x, batch_size=16, verbose=0), reference.predict(x, batch_size=16, verbose=0)
    )


@pytest.mark.parametrize("assign", ["stages in call", "set_pipeline_stage_assignment"])
def test_a_subclassed_model_pipelines_as_the_functional_pipeline(assign):
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        reference = pipelined_functional()
        model = like(reference, Net(stages=assign == "stages in call"))
        if assign == "set_pipeline_stage_assignment":
            assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [None, None]
            model.set_pipeline_stage_assignment([0, 1])
        for m in (reference, model):
            m.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [0, 1]
    (ours, theirs), (mine, its) = train_both(reference, model, steps_per_execution=8, batch_size=8)
    assert ours == theirs
    assert mine.seconds_per_execution == its.seconds_per_execution


def test_stage_assignments_of_an_unbuilt_subclassed_model_are_graphcores_errors():
    model = Net()
    with pytest.raises(RuntimeError, match=r"Cannot get pipeline stage assignments for model `net` which has not been"):
        model.get_pipeline_stage_assignment()
    with pytest.raises(RuntimeError, match=r"Please call `model.build\(\)` first, or assign pipeline stages in your"):
        model.set_pipeline_stage_assignment([0, 1])
    model(np.ones((2, FEATURES), np.float32))  # an eager call builds the weights, not the graph (as Graphcore's)
    with pytest.raises(RuntimeError, match="which has not been built yet"):
        model.get_pipeline_stage_assignment()
    model.build((None, FEATURES))
    assert len(model.get_pipeline_stage_assignment()) == 2


class Untraceable(Net):
    def call(self, inputs, training=None):
        return tf.nn.softmax(self.out(self.hidden(inputs)) * 2.0)


def test_a_call_with_tf_ops_runs_on_the_ipu_but_cannot_be_given_stages():
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = Untraceable()
        compile_model(model, 4)
    x, y = data(64)
    history = model.fit(x, y, batch_size=16, verbose=0)
    assert len(history.history["loss"]) == 1 and model.get_ipu_executable("train").seconds_per_execution > 0
    with pytest.raises(RuntimeError, match=r"could not be traced with keras.Input tensors \(.*\).*keras.layers.Lambda"):
        model.set_pipeline_stage_assignment([0, 1])


class WrittenOut(Net):
    """Keras 2's default steps written out by hand: the same ops as the built-in steps."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.compiled_loss(y, y_pred)
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def predict_step(self, data):
        return self(data[0], training=False)


def test_steps_of_ones_own_cost_and_compute_as_the_built_in_steps_of_the_same_ops():
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        reference, model = build(0), WrittenOut()
        like(reference, model)
    (ours, theirs), (mine, its) = train_both(reference, model, steps_per_execution=4)
    assert ours == theirs and model.optimizer.iterations == reference.optimizer.iterations == 32
    assert mine.seconds_per_execution == its.seconds_per_execution and mine.compile_seconds == its.compile_seconds
    x, y = data(64, seed=5)
    assert model.evaluate(x, y, batch_size=16, verbose=0) == reference.evaluate(x, y, batch_size=16, verbose=0)
    np.testing.assert_array_equal(
        model.predict(x, batch_size=16, verbose=0), reference.predict(x, batch_size=16, verbose=0)
    )
    for mode in ("test", "predict"):
        assert (
            model.get_ipu_executable(mode).seconds_per_execution
            == reference.get_ipu_executable(mode).seconds_per_execution
        )


def test_a_train_step_of_ones_own_on_replicas_is_refused_before_it_changes_anything():
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = WrittenOut()
        compile_model(model, 2)
    model.build((None, FEATURES))
    before = model.get_weights()
    x, y = data(64)
    with pytest.raises(NotSimulatedError, match=r"WrittenOut.train_step on 2 replica\(s\).*use auto_select_ipus = 1"):
        model.fit(x, y, batch_size=8, verbose=0)
    for old, now in zip(before, model.get_weights(), strict=True):
        np.testing.assert_array_equal(old, now)


class Shared(keras.Model):
    """Graphcore's keras_tf2_example12.py's model: one Dense called four times, assigned by node index."""

    def __init__(self):
        super().__init__()
        self.first, self.shared = keras.layers.Dense(8), keras.layers.Dense(8)
        self.concat, self.last = keras.layers.Concatenate(), keras.layers.Dense(CLASSES, activation="softmax")

    def call(self, inputs):
        x = self.first(inputs)
        x1, x2 = self.shared(x), self.shared(x)
        return self.last(self.concat([self.shared(x1), self.shared(x2)]))


def test_a_node_index_is_which_call_of_its_layer_it_is_as_in_graphcores_keras(capsys):
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = Shared()
        model.build((None, FEATURES))
        assignments = model.get_pipeline_stage_assignment()
        assert [(a.layer.name, a.node_index) for a in assignments] == [
            ("dense", 0),
            ("dense_1", 0),
            ("dense_1", 1),
            ("dense_1", 2),
            ("dense_1", 3),
            ("concatenate", 0),
            ("dense_2", 0),
        ]
        for a in assignments:  # as Graphcore's example assigns them
            shared_stage = 1 if a.node_index < 2 else 2
            a.pipeline_stage = {"dense": 0, "dense_1": shared_stage, "concatenate": 2, "dense_2": 3}[a.layer.name]
        model.set_pipeline_stage_assignment(assignments)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=8, device_mapping=[0, 1, 1, 0])
        compile_model(model, 8)
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [0, 1, 1, 2, 2, 2, 3]
    x, y = data(128)
    assert len(model.fit(x, y, batch_size=8, verbose=0).history["loss"]) == 1
    assert (
        "WARNING:ipu_teach:Layer `dense_1` of model `shared` is called in pipeline stages [1, 2]; ipu-teach costs all "
        "its calls in stage 2" in capsys.readouterr().out
    )
