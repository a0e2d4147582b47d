"""What tools/make_tensorboard_goldens.py and tests/keras/test_tensorboard.py both write: ``tf.summary`` calls
and a fit with the ``TensorBoard`` callback, the same in ipu-teach and in real tf-keras (same weights, data
and options), so that the event files, the tags and the logged values can be compared."""

import os

import numpy as np

WALL_TIME = 1_700_000_000.0
"""The wall time ipu-teach's events carry in the comparison, so that their bytes are reproducible."""

_rng = np.random.default_rng(2025)
IMAGES = _rng.uniform(0, 1, (3, 4, 5, 1)).astype(np.float32)
WEIGHTS = [_rng.normal(0, 0.5, (4, 3)), np.zeros(3), _rng.normal(0, 0.5, (3, 2)), np.zeros(2)]
X, Y = _rng.normal(size=(8, 4)).astype(np.float32), _rng.integers(0, 2, 8)
VALIDATION = (_rng.normal(size=(4, 4)).astype(np.float32), _rng.integers(0, 2, 4))


def write_summaries(tf, logdir) -> None:
    writer = tf.summary.create_file_writer(os.path.join(logdir, "summary"))
    with writer.as_default():
        tf.summary.scalar("loss", 0.25, step=3)
        tf.summary.histogram("weights", np.linspace(-1, 1, 11), step=3, buckets=4)
        tf.summary.image("pictures", IMAGES, step=3, max_outputs=2)
        tf.summary.experimental.set_step(7)
        tf.summary.scalar("accuracy", 0.75)
        tf.summary.experimental.set_step(None)
    writer.close()


def fit_with_tensorboard(keras, logdir):
    """Two epochs of SGD on fixed weights and data, the TensorBoard callback writing every option it has."""
    model = keras.Sequential(
        [keras.layers.Dense(3, activation="relu", input_shape=(4,), name="hidden"), keras.layers.Dense(2, name="out")]
    )
    model.set_weights([w.astype(np.float32) for w in WEIGHTS])
    model.compile(keras.optimizers.SGD(0.1), keras.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
    callback = keras.callbacks.TensorBoard(
        os.path.join(logdir, "fit"), histogram_freq=1, write_images=True, update_freq=2, write_graph=False
    )
    model.fit(X, Y, batch_size=4, epochs=2, validation_data=VALIDATION, verbose=0, shuffle=False, callbacks=[callback])
