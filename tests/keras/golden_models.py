"""The models golden fixtures hold tf-keras' numbers for, made from the ``keras`` (and ``tf``) given, so that
tools/make_keras_goldens.py builds them with tf-keras and the tests with ipu-teach: the models written as classes
of golden/subclassed.json and the regularized model of golden/regularizers.json; and the seeded weights of the
keras.applications models of golden/applications.json."""

import numpy as np


def classes(keras, tf):
    """(Block, Net, DoubledLoss): a layer of its own holding a Dense (its call takes no ``training``); a model
    holding layers in an attribute, a list and a dict, calling BatchNormalization without ``training`` (it
    follows fit's and predict's); and that model with Keras 2's train_step written out, its loss doubled."""

    class Block(keras.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.inner = keras.layers.Dense(units, activation="relu")

        def build(self, input_shape):
            self.scale = self.add_weight("scale", shape=(self.units,), initializer="ones")

        def call(self, inputs):
            return self.inner(inputs) * self.scale

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.first = keras.layers.Dense(8, activation="relu")
            self.blocks = [Block(8), Block(8)]
            self.norm = {"bn": keras.layers.BatchNormalization()}
            self.last = keras.layers.Dense(3, activation="softmax")

        def call(self, inputs, training=None):
            x = self.first(inputs)
            for block in self.blocks:
                x = block(x)
            return self.last(self.norm["bn"](x))

    class DoubledLoss(Net):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = 2.0 * self.compiled_loss(y, y_pred, regularization_losses=self.losses)
            gradients = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
            self.compiled_metrics.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    return Block, Net, DoubledLoss


def regularized_model(keras):
    """A model with every kind of regularizer: weight penalties on kernels, biases, PReLU's alpha and separable
    kernels, and an activity penalty on a Dense layer's outputs."""
    layers, regularizers = keras.layers, keras.regularizers
    inputs = keras.Input((5, 5, 2))
    x = layers.Conv2D(3, 3, kernel_regularizer=regularizers.l2(0.05), bias_regularizer="l1")(inputs)
    x = layers.PReLU(alpha_regularizer=regularizers.l2(0.1))(x)
    x = layers.SeparableConv2D(
        2, 2, depthwise_regularizer=regularizers.l1(0.01), pointwise_regularizer=regularizers.l2(0.02)
    )(x)
    x = layers.Flatten()(x)
    x = layers.Dense(4, activation="relu", activity_regularizer=regularizers.l1_l2(0.01, 0.02))(x)
    outputs = layers.Dense(
        3, activation="softmax", kernel_regularizer="l1_l2", bias_regularizer=regularizers.L1L2(l2=0.5)
    )(x)
    return keras.Model(inputs, outputs)


def application_weights(weights, seed):
    """Seeded values for ``weights`` (``(name, shape)`` pairs in Keras' order) that keep the activations of a deep
    network finite: He-scaled kernels, batch-norm scales and variances near 1, small offsets. ResNet-50's own
    weights (98 MB) are too large for a fixture: the tool and the test draw these instead."""
    rng = np.random.default_rng(seed)
    values = []
    for name, shape in weights:
        leaf = name.split("/")[-1].split(":")[0]
        if leaf in ("kernel", "depthwise_kernel"):
            fan_in = int(np.prod(shape[:2] if leaf == "depthwise_kernel" else shape[:-1]))
            values.append(rng.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32))
        elif leaf in ("gamma", "moving_variance"):
            values.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        else:
            values.append(rng.normal(0, 0.1, shape).astype(np.float32))
    return values
