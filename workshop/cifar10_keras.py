"""The workshop slides' Keras hands-on ("TF2/KERAS ON IPU"): their CIFAR-10 model on one IPU, as the slides write it.

Run it on the simulated IPU with ``ipu-teach run workshop/cifar10_keras.py`` (its ``tensorflow`` imports become
ipu-teach's); on a real IPU-POD it runs with ``python`` in Graphcore's TensorFlow 2 environment. Between the
slides' code and this file there are only the two options below and a clear message when CIFAR-10 is missing.

CIFAR-10 comes from Keras' cache folder (``~/.keras/datasets``: ``cifar-10-binary.tar.gz``, its folder
``cifar-10-batches-bin`` or a ``cifar10.npz`` of Keras' arrays) or ``IPU_TEACH_CIFAR10``; ipu-teach downloads
nothing. Without it, the slides' synthetic-data switch trains on synthetic images of CIFAR-10's shapes (the IPU
makes its own data, random with the slides' initializer; the losses and accuracy mean nothing):

    TF_POPLAR_FLAGS="--use_synthetic_data --synthetic_data_initializer=random" \
        ipu-teach run workshop/cifar10_keras.py --epochs 1 --train-samples 1024

Options: ``--epochs N`` (the slides: 40) and ``--train-samples N`` (the first N training images, a multiple of
the batch of 64, for a short run: the simulator computes the numerics on this machine's CPU).
"""

import argparse
import sys

import tensorflow as tf
from tensorflow.keras.layers import Activation, Conv2D, Dense, Dropout, Flatten, MaxPooling2D
from tensorflow.python import ipu

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epochs", type=int, default=40, help="epochs to train (the slides: 40)")
parser.add_argument("--train-samples", type=int, default=None, help="train on the first N images (default: all)")
args = parser.parse_args()

cfg = ipu.config.IPUConfig()
cfg.auto_select_ipus = 1
cfg.configure_ipu_system()

with ipu.ipu_strategy.IPUStrategy().scope():
    try:
        (x_train, y_train), (x_test, y_test) = tf.keras.datasets.cifar10.load_data()
    except FileNotFoundError as error:
        sys.exit(f"cifar10_keras.py: {error}")
    x_train = x_train[: args.train_samples].astype("float32") / 255.0
    y_train = tf.keras.utils.to_categorical(y_train[: args.train_samples], 10)
    ds_train = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(64, drop_remainder=True)

    model = tf.keras.Sequential(
        [
            Conv2D(32, (3, 3), padding="same", input_shape=x_train.shape[1:]),
            Activation("relu"),
            Conv2D(32, (3, 3)),
            Activation("relu"),
            MaxPooling2D(pool_size=(2, 2)),
            Dropout(0.25),
            Conv2D(64, (3, 3), padding="same"),
            Activation("relu"),
            Conv2D(32, (3, 3)),
            Activation("relu"),
            MaxPooling2D(pool_size=(2, 2)),
            Dropout(0.25),
            Flatten(),
            Dense(512),
            Activation("relu"),
            Dropout(0.5),
            Dense(10),
            Activation("softmax"),
        ]
    )
    model.compile(
        loss="categorical_crossentropy", optimizer=tf.optimizers.SGD(learning_rate=0.016), metrics=["accuracy"]
    )
    model.fit(ds_train, epochs=args.epochs)
