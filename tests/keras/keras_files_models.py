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


def branches(keras):
    """Functional: two Dense branches of different widths meet (Keras lists them deepest first), Adam, metric
    objects (saved by class and configuration)."""
    keras.utils.set_random_seed(5)
    inputs = keras.Input((4,), name="features")
    wide = keras.layers.Dense(5, activation="relu", name="wide")(inputs)
    narrow = keras.layers.Dense(2, activation="tanh", name="narrow")(inputs)
    deeper = keras.layers.Dense(3, name="deeper")(wide)
    merged = keras.layers.Concatenate(name="merge")([narrow, deeper])
    model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax", name="out")(merged), name="branches")
    metrics = ["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=1, name="top_1")]
    model.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", metrics=metrics)
    rng = np.random.default_rng(5)
    model.fit(rng.normal(size=(16, 4)).astype(np.float32), rng.integers(0, 2, 16), batch_size=8, verbose=0)
    step = (rng.normal(size=(8, 4)).astype(np.float32), rng.integers(0, 2, 8))
    return model, rng.normal(size=(4, 4)).astype(np.float32), step


def recurrent(keras):
    """Sequential Embedding / Bidirectional LSTM / Dense, RMSprop with momentum (its weights sit in cells)."""
    keras.utils.set_random_seed(6)
    model = keras.Sequential(
        [
            keras.layers.Embedding(6, 3, input_length=4, name="embed"),
            keras.layers.Bidirectional(keras.layers.LSTM(2), name="both_ways"),
            keras.layers.Dense(1, name="out"),
        ],
        name="recurrent",
    )
    model.compile(keras.optimizers.RMSprop(0.01, momentum=0.5), "mse")
    rng = np.random.default_rng(6)
    model.fit(rng.integers(0, 6, (8, 4)).astype(np.float32), rng.normal(size=(8, 1)), batch_size=4, verbose=0)
    step = (rng.integers(0, 6, (4, 4)).astype(np.float32), rng.normal(size=(4, 1)).astype(np.float32))
    return model, rng.integers(0, 6, (3, 4)).astype(np.float32), step


KERAS_FORMAT_MODELS = {"dense_bn": dense_bn, "branches": branches, "recurrent": recurrent}
"""The ipu-teach models tools/make_keras_files.py saves as ``.keras`` and loads in real Keras."""


def keras_zip_layout(path, leave_out=()) -> dict:
    """What a reader of a ``.keras`` file goes by: its entries in order (and whether compressed), the groups
    and datasets of ``model.weights.h5`` (shape, dtype) but those under ``leave_out``, and each configured
    object's class and module in ``config.json``."""
    import io
    import zipfile

    import h5py

    with zipfile.ZipFile(path) as archive:
        entries = [[info.filename, info.compress_type] for info in archive.infolist()]
        config = json.loads(archive.read("config.json"))
        weights = archive.read("model.weights.h5")
    items = {}
    with h5py.File(io.BytesIO(weights), "r") as f:
        f.visititems(
            lambda name, item: (
                None
                if name.startswith(tuple(leave_out))
                else items.__setitem__(
                    name, [list(item.shape), item.dtype.str] if isinstance(item, h5py.Dataset) else []
                )
            )
        )
    classes = []

    def visit(value):
        if isinstance(value, dict):
            if "class_name" in value and "module" in value:
                classes.append([value["class_name"], value["module"], value.get("registered_name")])
            for inner in value.values():
                visit(inner)
        elif isinstance(value, list):
            for inner in value:
                visit(inner)

    visit(config)
    return {"entries": entries, "weights": dict(sorted(items.items())), "classes": classes}


def nested(keras):
    """A functional model used as a layer of another, beside a skip branch (Keras numbers the inner model's
    call node 1: its node 0 is its own making)."""
    inner_input = keras.Input((4,), name="inner_in")
    hidden = keras.layers.Dense(5, name="inner_hidden")(inner_input)
    inner = keras.Model(inner_input, keras.layers.Dense(3, activation="relu", name="inner_out")(hidden), name="base")
    inputs = keras.Input((4,), name="outer_in")
    merged = keras.layers.Add(name="add")([inner(inputs), keras.layers.Dense(3, name="skip")(inputs)])
    return keras.Model(inputs, keras.layers.Dense(2, name="out")(merged), name="nested")
