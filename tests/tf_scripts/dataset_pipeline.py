"""tf.data beyond the basics (zip, skip, take, unbatch, from_generator, element_spec, options) and the
tf functions a Dataset.map needs, training a model on the CPU."""

import numpy as np
import tensorflow as tf
from tensorflow import keras

tf.random.set_seed(11)
pixels = tf.random.uniform([96, 6, 6], maxval=256, dtype=tf.int32)
classes = tf.random.uniform([96], maxval=3, dtype=tf.int64)

images = tf.data.Dataset.from_tensor_slices(pixels)
labels = tf.data.Dataset.from_tensor_slices(classes)
pairs = tf.data.Dataset.zip((images, labels))


def prepare(image, label):
    image = tf.divide(tf.cast(image, tf.float32), 255.0)
    image = tf.expand_dims(tf.reshape(image, [6, 6]), -1)
    return image, tf.one_hot(label, depth=3)


train = pairs.skip(32).map(prepare).batch(16, drop_remainder=True)
valid = pairs.take(32).map(prepare).batch(16)
print(train.element_spec)
assert train.element_spec[0].shape == (16, 6, 6, 1) and train.element_spec[0].dtype == tf.float32
assert train.element_spec[1].dtype == tf.float32
assert valid.element_spec[0].shape == (None, 6, 6, 1)
assert len(list(train.unbatch())) == 64 and train.cardinality() == 4

options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
train = train.with_options(options)
assert train.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.OFF


def noisy_batches():
    rng = np.random.default_rng(0)
    for _ in range(2):
        yield rng.uniform(size=(16, 6, 6, 1)), np.eye(3)[rng.integers(0, 3, 16)]


extra = tf.data.Dataset.from_generator(
    noisy_batches,
    output_signature=(
        tf.TensorSpec(shape=(16, 6, 6, 1), dtype=tf.float32),
        tf.TensorSpec(shape=(16, 3), dtype=tf.float32),
    ),
)
assert next(iter(extra))[0].dtype == np.float32  # from_generator converts to the declared dtype

model = keras.Sequential([keras.layers.Flatten(input_shape=(6, 6, 1)), keras.layers.Dense(3, activation="softmax")])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
history = model.fit(train.concatenate(extra), validation_data=valid, epochs=2, verbose=0)
print("history", sorted(history.history))
assert set(history.history) >= {"loss", "val_loss"}
