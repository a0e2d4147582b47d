"""A functional model pipelined over two IPUs with PipelineStage, trained and then used for inference,
on random data from tf.random; imports as Graphcore's model-parallelism tech note writes them."""

import numpy as np
import tensorflow as tf
from tensorflow.keras import ipu, layers, optimizers
from tensorflow.python.data.ops.dataset_ops import Dataset
from tensorflow.python.ipu import config, ipu_strategy, utils

tf.random.set_seed(5)
features = tf.random.normal([64, 16], dtype=tf.float32)
labels = tf.random.uniform([64], maxval=4, dtype=tf.int32)
assert features.numpy().dtype == np.float32 and labels.dtype == tf.int32

dataset = Dataset.from_tensor_slices((features, labels))
dataset = dataset.batch(batch_size=4, drop_remainder=True).shuffle(16).cache().repeat()
dataset = dataset.prefetch(tf.data.experimental.AUTOTUNE)


def make_model():
    inputs = layers.Input(shape=(16,), dtype=tf.float32, batch_size=4)
    with ipu.PipelineStage(0):
        x = layers.Dense(32, activation="relu")(inputs)
    with ipu.PipelineStage(1):
        outputs = layers.Dense(4)(x)
    return tf.keras.Model(inputs, outputs)


cfg = config.IPUConfig()
cfg.auto_select_ipus = 2
cfg.allow_recompute = True
cfg.selection_order = config.SelectionOrder.SNAKE
cfg.configure_ipu_system()
utils.move_variable_initialization_to_cpu()

strategy = ipu_strategy.IPUStrategy()
with strategy.scope():
    model = make_model()
    model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
    model.compile(
        steps_per_execution=16,
        optimizer=optimizers.SGD(0.05),
        loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(dataset, steps_per_epoch=16, epochs=3, verbose=0)
    print("losses", [round(value, 3) for value in history.history["loss"]])
    assert history.history["loss"][-1] < history.history["loss"][0]

    predictions = model.predict(dataset.map(lambda x, y: x), steps=4)
    print("predictions", predictions.shape)
    assert predictions.shape == (16, 4)
