"""The ipu-teach models that tools/make_keras_files.py saves as ``.h5`` and loads in real Keras, and the
layout of an HDF5 file as the tool records it; shared by the tool and tests/keras/test_keras_files.py, so
both build exactly the same models (seeded) and describe files the same way. Each builder returns the
trained model, inputs to predict on, and one more training batch (its step shows the optimizer's state
went across: Adam's step size depends on the step count and both moments)."""

import json

import numpy as np


def dense_bn(keras):
    """Sequential Dense / BatchNormalization / Dense softmax, Adam, two epochs."""
    keras.utils.set_random_seed(3)
    model = keras.Sequential(
        [
            keras.layers.Dense(5, activation="relu", input_shape=(4,), name="hidden"),
            keras.layers.BatchNormalization(name="norm"),
            keras.layers.Dense(3, activation="softmax", name="probabilities"),
        ],
        name="dense_bn",
    )
    model.compile(keras.optimizers.Adam(0.02), "categorical_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 4)).astype(np.float32)
    model.fit(x, np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)], batch_size=8, epochs=2, verbose=0)
    step = (rng.normal(size=(8, 4)).astype(np.float32), np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)])
    return model, rng.normal(size=(4, 4)).astype(np.float32), step


def conv(keras):
    """Functional Conv2D / MaxPooling2D / Flatten / Dense logits, SGD with momentum, a loss object."""
    keras.utils.set_random_seed(4)
    inputs = keras.Input((6, 6, 1), name="image")
    x = keras.layers.Conv2D(3, 3, activation="relu", name="conv")(inputs)
    x = keras.layers.MaxPooling2D(2, name="pool")(x)
    x = keras.layers.Flatten(name="flat")(x)
    model = keras.Model(inputs, keras.layers.Dense(2, name="logits")(x), name="conv")
    model.compile(
        keras.optimizers.SGD(0.05, momentum=0.9), keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    )
    rng = np.random.default_rng(4)
    x = rng.normal(size=(8, 6, 6, 1)).astype(np.float32)
    model.fit(x, rng.integers(0, 2, 8), batch_size=4, epochs=1, verbose=0)
    step = (rng.normal(size=(4, 6, 6, 1)).astype(np.float32), rng.integers(0, 2, 4))
    return model, rng.normal(size=(3, 6, 6, 1)).astype(np.float32), step


IPU_TEACH_MODELS = {"dense_bn": dense_bn, "conv": conv}


def file_layout(path) -> dict:
    """What a Keras reader of an HDF5 file goes by: root attributes, layer and weight names, each dataset's
    shape and dtype, and the classes and names of ``model_config`` and the ``training_config``."""
    import h5py

    def text(value):
        return value.decode("utf8") if isinstance(value, bytes) else str(value)

    layout = {"datasets": {}, "names": {}}
    with h5py.File(path, "r") as f:
        layout["attributes"] = sorted(f.attrs)

        def visit(name, item):
            for attribute in ("layer_names", "weight_names"):
                if attribute in item.attrs:
                    layout["names"][f"{name}/{attribute}"] = [text(n) for n in item.attrs[attribute]]
            if isinstance(item, h5py.Dataset):
                layout["datasets"][name] = [list(item.shape), item.dtype.str]

        if "layer_names" in f.attrs:
            layout["names"]["layer_names"] = [text(n) for n in f.attrs["layer_names"]]
        f.visititems(visit)
        if "model_config" in f.attrs:
            config = json.loads(text(f.attrs["model_config"]))
            layout["model"] = [
                config["class_name"],
                [[e["class_name"], e["config"]["name"]] for e in config["config"]["layers"]],
            ]
        if "training_config" in f.attrs:
            layout["training_config"] = json.loads(text(f.attrs["training_config"]))
    return layout
