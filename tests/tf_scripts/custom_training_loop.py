"""Train an MNIST classifier with a custom training loop on one IPU: a tf.function run by strategy.run, taking
its batches from an IPUInfeedQueue in an on-device loop and giving its losses to an IPUOutfeedQueue; then
evaluate it with a Keras metric in a second loop."""

import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.python import ipu

BATCH, STEPS_PER_EXECUTION = 32, 16
(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()


def make_dataset(x, y):
    ds = tf.data.Dataset.from_tensor_slices((x[:2048], y[:2048])).batch(BATCH, drop_remainder=True)
    return ds.map(lambda images, labels: (tf.cast(images, tf.float32) / 255.0, tf.cast(labels, tf.int32)))


@tf.function(jit_compile=True)
def training_loop(iterator, outfeed, model, optimizer, steps):
    for _ in tf.range(steps):
        images, labels = next(iterator)
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        outfeed.enqueue(loss)


@tf.function(experimental_compile=True)
def evaluation_loop(iterator, steps):
    for _ in tf.range(steps):
        images, labels = next(iterator)
        accuracy.update_state(labels, model(images, training=False))


cfg = ipu.config.IPUConfig()
cfg.auto_select_ipus = 1
cfg.configure_ipu_system()
strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    model = keras.Sequential(
        [
            keras.layers.Flatten(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )
    loss_fn = keras.losses.SparseCategoricalCrossentropy()
    accuracy = keras.metrics.SparseCategoricalAccuracy()
    optimizer = keras.optimizers.SGD(0.1)
    outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
    for epoch in range(2):
        infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(make_dataset(x_train, y_train))
        for _ in range(2048 // BATCH // STEPS_PER_EXECUTION):
            strategy.run(training_loop, args=[infeed, outfeed, model, optimizer, STEPS_PER_EXECUTION])
        losses = outfeed.dequeue()
        print(f"epoch {epoch + 1}: {len(losses)} losses, mean {np.mean(losses):.2f}")
    accuracy.reset_states()
    strategy.run(evaluation_loop, args=[iter(make_dataset(x_test, y_test)), 2048 // BATCH])
    assert losses.shape == (64,) and np.mean(losses) < 1.0 and accuracy.result() > 0.6, (losses, accuracy.result())
    print("accuracy above 0.6")
