"""Outfeeds used inside Keras' fit, as Graphcore's inspecting-tensors example uses them (graphcore/examples
tutorials/feature_examples/tensorflow2/inspecting_tensors): a layer that enqueues its activations once per step,
a TensorFlow 1 optimizer (wrapped by compile in Keras' TFOptimizer) that enqueues the gradients it applies, and
callbacks that dequeue them. Nothing is enqueued where TensorFlow only builds a graph it never runs."""

import numpy as np
from ipu_test_helpers import configure

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu
from ipu_teach.tensorflow.training.optimizer import Optimizer

X = np.random.default_rng(0).normal(size=(32, 6)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)


class Outfeed(keras.layers.Layer):
    """The example's Outfeed layer: enqueues its input once per step (TensorFlow's `enqueued` is per graph)."""

    def __init__(self, queue, **kwargs):
        super().__init__(**kwargs)
        self.queue = queue
        self.graph_names = []

    def call(self, inputs):
        self.graph_names.append(tf.compat.v1.get_default_graph().name)
        if not self.queue.enqueued:
            self.queue.enqueue({self.name: inputs})
        return inputs


class OutfeedOptimizer(Optimizer):
    """The example's OutfeedOptimizer, reduced: enqueues the gradients it is given, then applies them with Keras."""

    def __init__(self, wrapped, queue):
        super().__init__(False, "OutfeedOptimizer")
        self.wrapped, self.queue = wrapped, queue

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        self.queue.enqueue({v.name + "_grad": g for g, v in grads_and_vars})
        return self.wrapped.apply_gradients(grads_and_vars)


def _model(layer):
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(6,))
    x = keras.layers.Dense(4, activation="relu", name="dense_4")(inputs)
    return keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(layer(x)) if layer else x)


def _fit(optimizer, layer=None, accumulation=2):
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = _model(layer)
        model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=accumulation)
        model.compile(optimizer, "sparse_categorical_crossentropy", steps_per_execution=8)
        model.fit(X, Y, batch_size=4, shuffle=False, verbose=0)
    return model


def test_a_layer_enqueues_once_per_step_and_never_while_a_graph_is_only_traced():
    activations = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    layer = Outfeed(activations, name="acts")
    _fit(keras.optimizers.SGD(0.1), layer)
    assert activations.enqueued  # on the host: something was enqueued
    assert activations.dequeue()["acts"].shape == (8, 4, 4)  # 8 steps of 4 samples: not the compiler's trace
    # Keras' shape inference and the compiler's trace only build graphs, named as TensorFlow names them
    assert layer.graph_names[0] == "acts_scratch_graph" and "train_function" in layer.graph_names
    assert layer.graph_names.count("") == 8


def test_a_tensorflow_1_optimizer_is_given_the_accumulated_gradients_once_per_update_and_trains_as_sgd():
    gradients = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    wrapped = _fit(OutfeedOptimizer(keras.optimizers.SGD(0.1), gradients))
    assert type(wrapped.optimizer).__name__ == "TFOptimizer" and wrapped.optimizer.iterations == 4
    grads = gradients.dequeue()
    assert grads["dense_4/kernel:0_grad"].shape == (4, 6, 4)  # 8 micro-batches, accumulated in pairs
    plain = _fit(keras.optimizers.SGD(0.1))
    for got, want in zip(wrapped.get_weights(), plain.get_weights()):
        np.testing.assert_array_equal(got, want)
    # costed as the Keras optimizer it holds: the same simulated step
    assert (
        wrapped.get_ipu_executable("train").seconds_per_execution
        == plain.get_ipu_executable("train").seconds_per_execution
    )
