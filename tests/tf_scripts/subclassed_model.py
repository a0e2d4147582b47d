"""Train an MNIST classifier written as a class on two IPUs: a keras.Model subclass whose call puts its layers
in two pipeline stages, with a layer of its own (a scaled residual block); then a second model whose own
train_step trains with a GradientTape, on one IPU."""

import tensorflow as tf
from tensorflow import keras
from tensorflow.python import ipu

BATCH = 32
(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
x_train, y_train = x_train[:2048].reshape(-1, 784) / 255.0, y_train[:2048]
x_test, y_test = x_test[:512].reshape(-1, 784) / 255.0, y_test[:512]


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=True)
    return ds.map(lambda images, labels: (tf.cast(images, tf.float32), tf.cast(labels, tf.int32)))


class ResidualBlock(keras.layers.Layer):
    """x + scale * relu(dense(x)): a layer holding a layer, with a weight of its own."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(units, activation="relu")

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(), initializer="zeros")

    def call(self, inputs):
        return inputs + self.scale * self.dense(inputs)


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(64, activation="relu")
        self.blocks = [ResidualBlock(64) for _ in range(2)]
        self.dropout = keras.layers.Dropout(0.1)
        self.logits = keras.layers.Dense(10)

    def call(self, inputs, training=None):
        with ipu.keras.PipelineStage(0):
            x = self.hidden(inputs)
            x = self.blocks[0](x)
        with ipu.keras.PipelineStage(1):
            x = self.blocks[1](x)
            return self.logits(self.dropout(x, training=training))


class TapeClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(64, activation="relu")
        self.logits = keras.layers.Dense(10)

    def call(self, inputs):
        return self.logits(self.hidden(inputs))

    def train_step(self, data):
        images, labels = data
        with tf.GradientTape() as tape:
            logits = self(images, training=True)
            loss = self.compiled_loss(labels, logits, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(labels, logits)
        return {m.name: m.result() for m in self.metrics}


loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

cfg = ipu.config.IPUConfig()
cfg.auto_select_ipus = 2
cfg.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    tf.random.set_seed(1)
    model = Classifier()
    model.build((BATCH, 784))
    model.summary()
    model.print_pipeline_stage_assignment_summary()
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    model.compile(
        optimizer=keras.optimizers.SGD(0.05, momentum=0.9),
        loss=loss_fn,
        metrics=["accuracy"],
        steps_per_execution=16,
    )
    model.fit(make_dataset(x_train, y_train), epochs=2, verbose=2)
    loss, accuracy = model.evaluate(make_dataset(x_test, y_test), verbose=0)
    print(f"pipelined test accuracy {accuracy:.2f}")
    assert accuracy > 0.6, accuracy

cfg = ipu.config.IPUConfig()
cfg.auto_select_ipus = 1
cfg.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    model = TapeClassifier()
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss_fn, metrics=["accuracy"], steps_per_execution=16)
    history = model.fit(make_dataset(x_train, y_train), epochs=2, verbose=2)
    print("history", sorted(history.history))
    loss, accuracy = model.evaluate(make_dataset(x_test, y_test), verbose=0)
    print(f"train_step test accuracy {accuracy:.2f}")
    assert accuracy > 0.6, accuracy
