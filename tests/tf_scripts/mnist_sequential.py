"""Train a small Sequential classifier on MNIST on one IPU, fed by a tf.data pipeline."""

import tensorflow as tf
from tensorflow import keras
from tensorflow.python import ipu

if tf.__version__[0] != "2":
    raise ImportError("TensorFlow 2 is required for this example")

BATCH = 32
(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
x_train, y_train = x_train[:4096], y_train[:4096]
x_test, y_test = x_test[:1024], y_test[:1024]


def make_dataset(x, y, shuffle):
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    if shuffle:
        ds = ds.shuffle(len(x), seed=7)
    ds = ds.batch(BATCH, drop_remainder=True)
    ds = ds.map(
        lambda images, labels: (tf.cast(images, tf.float32) / 255.0, tf.cast(labels, tf.int32)),
        num_parallel_calls=tf.data.AUTOTUNE,
    )
    return ds.cache().prefetch(tf.data.experimental.AUTOTUNE)


train_ds = make_dataset(x_train, y_train, shuffle=True).repeat()
test_ds = make_dataset(x_test, y_test, shuffle=False)

cfg = ipu.config.IPUConfig()
cfg.auto_select_ipus = 1
cfg.selection_order = ipu.config.SelectionOrder.ZIGZAG
cfg.configure_ipu_system()
print(
    "IPUs visible:",
    len(tf.config.list_physical_devices("IPU")),
    "attached:",
    len(tf.config.list_logical_devices("IPU")),
)

strategy = ipu.ipu_strategy.IPUStrategy()
with strategy.scope():
    tf.random.set_seed(1)
    model = keras.Sequential(
        [
            keras.layers.Flatten(),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )
    model.compile(
        loss=keras.losses.SparseCategoricalCrossentropy(),
        optimizer=keras.optimizers.SGD(learning_rate=0.1),
        metrics=["accuracy"],
        steps_per_execution=32,
    )
    history = model.fit(train_ds, steps_per_epoch=128, epochs=2, verbose=2)
    loss, accuracy = model.evaluate(test_ds, verbose=0)
    print(f"test accuracy {accuracy:.2f}")
    assert accuracy > 0.8, accuracy
    assert history.history["loss"][1] < history.history["loss"][0]
