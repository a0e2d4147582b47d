"""A script with its own command line: Python generators and keras.utils.Sequence in fit on the CPU,
and a shaped from_generator dataset on the IPU. Also imports `keras` directly, as Graphcore's SDK
installed it beside TensorFlow."""

import argparse
import sys

import keras
import numpy as np
import tensorflow as tf
from tensorflow.python import ipu

X = np.random.default_rng(0).uniform(size=(64, 8)).astype(np.float32)
Y = (X.sum(axis=1) > 4).astype(np.int32)


class Batches(keras.utils.Sequence):
    def __init__(self, batch_size):
        self.batch_size, self.epochs_seen = batch_size, 0

    def __len__(self):
        return len(X) // self.batch_size

    def __getitem__(self, index):
        rows = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return X[rows], Y[rows]

    def on_epoch_end(self):
        self.epochs_seen += 1


def batches(batch_size):
    while True:
        for start in range(0, len(X), batch_size):
            yield X[start : start + batch_size], Y[start : start + batch_size]


def make_model():
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(8,))])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    return model


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args(argv)

    sequence = Batches(16)
    make_model().fit(sequence, epochs=args.epochs, verbose=0)
    assert sequence.epochs_seen == args.epochs
    make_model().fit(batches(16), steps_per_epoch=4, epochs=args.epochs, verbose=0)

    cfg = ipu.config.IPUConfig()
    cfg.auto_select_ipus = 1
    cfg.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = make_model()
        try:
            model.fit(batches(16), steps_per_epoch=4)
        except ValueError as error:
            print("IPU refuses a generator:", str(error).split(".")[0])
        shaped = tf.data.Dataset.from_generator(
            lambda: batches(16), output_signature=(tf.TensorSpec((16, 8), tf.float32), tf.TensorSpec((16,), tf.int32))
        )
        model.fit(shaped, steps_per_epoch=4, epochs=args.epochs, verbose=0)
    print(f"trained {args.epochs} epoch(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
