"""Write the Keras files that tests/keras/test_keras_files.py loads into ipu-teach, and load ipu-teach's in Keras.

Runs ONLY in the reference environment with real TensorFlow, tf-keras and h5py (never a run-time or test
dependency of ipu-teach), with ipu-teach importable from the checkout:

    PYTHONPATH=. nice /work/refenv/bin/python tools/make_keras_files.py    # writes tests/keras/golden/files/
    PYTHONPATH=. nice /work/refenv/bin/python tools/make_keras_files.py keras_format   # that section alone

Both ways, with tf-keras 2.21 (Keras 2 semantics, legacy optimizers as Keras 2.6's):

1. Keras to ipu-teach: small models trained a few steps by real Keras are saved with ``model.save("m.h5")``,
   ``model.save("m.keras")`` and ``model.save_weights("w.h5")``; their inputs and Keras' predictions go to
   ``keras_files.json``, and the tests load the files into ipu-teach and compare (float32 precision). A
   model with a Lambda layer is saved too: ipu-teach must refuse it.
2. ipu-teach to Keras: models built and trained by ipu-teach (seeded) are saved by ipu-teach as ``.h5``
   (whole model and weights) into a temporary folder and loaded here by real Keras; Keras' predictions (also
   after one more training step, which uses the optimizer state read from the file), its optimizer's class
   and step count, and the layout of each file go to ``ipu_teach_files.json``. The tests
   build the same models, check ipu-teach's predictions equal Keras' and that the files it writes today
   have the layout Keras read.
3. ``.keras`` both ways (section keras_format): ipu-teach's ``.keras`` files loaded by real Keras (its
   predictions, and the layout of the file Keras writes for the same model, which ipu-teach's must have), and
   Keras' ``.keras`` files of models trained with its newer optimizers, whose state ipu-teach reads.
"""

import io
import json
import os
import pathlib
import sys
import tempfile
import zipfile

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2 (tf-keras), not Keras 3
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
import ipu_teach.keras as ipu_keras  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "keras"))
from keras_files_models import (  # noqa: E402
    IPU_TEACH_MODELS,
    KERAS_FORMAT_MODELS,
    file_layout,
    keras_zip_layout,
    nested,
)

OUT = REPO / "tests" / "keras" / "golden" / "files"
MADE_WITH = f"tensorflow {tf.__version__}, tf-keras {keras.__version__}, h5py {h5py.__version__}"


def mlp():
    """Sequential Dense / BatchNormalization / Dropout / Dense softmax, legacy Adam (Keras 2.6's)."""
    model = keras.Sequential(
        [
            keras.layers.Dense(6, activation="relu", input_shape=(5,), name="hidden"),
            keras.layers.BatchNormalization(name="norm"),
            keras.layers.Dropout(0.2, name="drop"),
            keras.layers.Dense(3, activation="softmax", name="probabilities"),
        ],
        name="mlp",
    )
    model.compile(keras.optimizers.legacy.Adam(0.01), "categorical_crossentropy", metrics=["accuracy"])
    return model, [(5,)], 3


def two_inputs():
    """Functional: a convolution branch and a dense branch concatenated, legacy SGD with momentum."""
    image = keras.Input((6, 6, 2), name="image")
    extra = keras.Input((3,), name="extra")
    x = keras.layers.Conv2D(4, 3, activation="relu", padding="same", name="conv")(image)
    x = keras.layers.MaxPooling2D(2, name="pool")(x)
    x = keras.layers.Flatten(name="flat")(x)
    y = keras.layers.Dense(4, activation="tanh", name="side")(extra)
    merged = keras.layers.Concatenate(name="merge")([x, y])
    outputs = keras.layers.Dense(2, activation="softmax", name="head")(merged)
    model = keras.Model([image, extra], outputs, name="two_inputs")
    model.compile(keras.optimizers.legacy.SGD(0.05, momentum=0.9), "sparse_categorical_crossentropy")
    return model, [(6, 6, 2), (3,)], 2


def sequence():
    """Embedding, LSTM and GRU (Keras' defaults: reset_after=True), new-style RMSprop."""
    model = keras.Sequential(
        [
            keras.layers.Embedding(10, 4, input_length=5, name="embed"),
            keras.layers.LSTM(3, return_sequences=True, name="lstm"),
            keras.layers.GRU(2, name="gru"),
            keras.layers.Dense(1, name="out"),
        ],
        name="sequence",
    )
    model.build((None, 5))
    model.compile(keras.optimizers.RMSprop(0.01), "mse")
    return model, [(5,)], None


def with_lambda():
    model = keras.Sequential(
        [keras.layers.Dense(2, input_shape=(3,), name="d"), keras.layers.Lambda(lambda t: t * 2, name="double")],
        name="with_lambda",
    )
    model.compile("sgd", "mse")
    return model


def data(rng, shapes, classes, n, integers=False):
    xs = [
        rng.integers(0, 10, (n,) + shape).astype(np.float32) if integers else rng.normal(0, 1, (n,) + shape)
        for shape in shapes
    ]
    xs = [x.astype(np.float32) for x in xs]
    if classes is None:
        y = rng.normal(0, 1, (n, 1)).astype(np.float32)
    elif classes == 2:
        y = rng.integers(0, 2, n)
    else:
        y = np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)]
    return xs, y


def keras_to_ipu_teach(rng) -> dict:
    cases = {}
    for make in (mlp, two_inputs, sequence):
        keras.backend.clear_session()
        model, shapes, classes = make()
        xs, y = data(rng, shapes, classes, 16, integers=make is sequence)
        model.fit(xs if len(xs) > 1 else xs[0], y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        name = make.__name__
        model.save(OUT / f"{name}.h5")
        model.save(OUT / f"{name}.keras")
        model.save_weights(OUT / f"{name}_weights.h5")
        test_x, _ = data(rng, shapes, classes, 4, integers=make is sequence)
        test_x = test_x if len(test_x) > 1 else test_x[0]
        step_x, step_y = data(rng, shapes, classes, 8, integers=make is sequence)
        cases[name] = {
            "x": [x.tolist() for x in (test_x if isinstance(test_x, list) else [test_x])],
            "prediction": model.predict(test_x, verbose=0).tolist(),
            "optimizer": type(model.optimizer).__name__,
            "iterations": int(model.optimizer.iterations.numpy()),
            "layer_names": [layer.name for layer in model.layers],
        }
        legacy = isinstance(model.optimizer, keras.optimizers.legacy.Optimizer)
        # A step to compare needs Keras 2.6's optimizer (ipu-teach's: tf-keras' newer RMSprop puts epsilon inside
        # the square root) and no dropout (its mask is random)
        if legacy and not any(isinstance(layer, keras.layers.Dropout) for layer in model.layers):
            model.train_on_batch(step_x if len(step_x) > 1 else step_x[0], step_y)
            cases[name]["step"] = {
                "x": [x.tolist() for x in step_x],
                "y": step_y.tolist(),
                "prediction_after": model.predict(test_x, verbose=0).tolist(),
            }
    keras.backend.clear_session()
    lambda_model = with_lambda()
    lambda_model.save(OUT / "with_lambda.h5")
    lambda_model.save(OUT / "with_lambda.keras")
    return cases


def ipu_teach_to_keras(rng) -> dict:
    """Each ipu-teach model saved by ipu-teach, then loaded by real Keras: whole model and weights alone."""
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, build in IPU_TEACH_MODELS.items():
            model, x, (step_x, step_y) = build(ipu_keras)
            model_path, weights_path = os.path.join(folder, f"{name}.h5"), os.path.join(folder, f"{name}_w.h5")
            model.save(model_path)
            model.save_weights(weights_path)
            loaded = keras.models.load_model(model_path)
            twin = keras.models.load_model(model_path, compile=False)
            twin.set_weights([np.zeros_like(w) for w in twin.get_weights()])
            twin.load_weights(weights_path)
            prediction = loaded.predict(x, verbose=0).tolist()
            iterations = int(loaded.optimizer.iterations.numpy())  # as read from the file
            loaded.train_on_batch(step_x, step_y)
            results[name] = {
                "prediction": prediction,
                "prediction_after_one_more_step": loaded.predict(x, verbose=0).tolist(),
                "weights_file_prediction": twin.predict(x, verbose=0).tolist(),
                "ipu_teach_prediction": model.predict(x, verbose=0).tolist(),
                "optimizer": type(loaded.optimizer).__name__,
                "optimizer_module": type(loaded.optimizer).__module__,
                "iterations": iterations,
                "loss": getattr(loaded.loss, "__name__", type(loaded.loss).__name__),
                "layout": {"model": file_layout(model_path), "weights": file_layout(weights_path)},
            }
    return results


def ipu_teach_keras_format_to_keras() -> dict:
    """Each ipu-teach model saved by ipu-teach as ``.keras``, loaded by real Keras, then saved again by Keras:
    Keras' predictions and optimizer from ipu-teach's file, and the layout of the file Keras writes itself
    (its metrics' variables left out: ipu-teach does not write them)."""
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, build in KERAS_FORMAT_MODELS.items():
            keras.backend.clear_session()
            model, x, (step_x, step_y) = build(ipu_keras)
            path, again = os.path.join(folder, f"{name}.keras"), os.path.join(folder, f"{name}_again.keras")
            model.save(path)
            loaded = keras.models.load_model(path)
            loaded.save(again)
            results[name] = {
                "prediction": loaded.predict(x, verbose=0).tolist(),
                "evaluate": loaded.evaluate(step_x, step_y, verbose=0),
                "metrics_names": loaded.metrics_names,
                "optimizer_module": type(loaded.optimizer).__module__,
                "iterations": int(loaded.optimizer.iterations.numpy()),
                "layer_names": [layer.name for layer in loaded.layers],
                "keras_layout": keras_zip_layout(again, leave_out=("metrics",)),
            }
    return results


def newer_optimizer_models():
    """tf-keras' newer optimizers (its default ``keras.optimizers``), whose ``.keras`` files hold their state:
    Adam on branches that meet (state in Keras' weight order), SGD with momentum."""
    inputs = keras.Input((3,), name="x")
    left = keras.layers.Dense(4, activation="relu", name="left")(inputs)
    right = keras.layers.Dense(2, name="right")(keras.layers.Dense(3, activation="tanh", name="first")(inputs))
    merged = keras.layers.Concatenate(name="merge")([left, right])
    adam = keras.Model(inputs, keras.layers.Dense(1, name="out")(merged), name="adam_branches")
    adam.compile(keras.optimizers.Adam(0.05), "mse")
    sgd = keras.Sequential([keras.layers.Dense(3, activation="tanh", input_shape=(3,)), keras.layers.Dense(1)])
    sgd.compile(keras.optimizers.SGD(0.05, momentum=0.9), "mse")
    return {"newer_adam": adam, "newer_sgd": sgd}


def newer_optimizers_to_ipu_teach(rng) -> dict:
    """Keras' ``.keras`` files of models trained with the newer optimizers, written to the fixtures folder; Keras'
    predictions, step count, and predictions after one more step from the state in the file."""
    cases = {}
    keras.backend.clear_session()
    for name, model in newer_optimizer_models().items():
        x, y = rng.normal(size=(16, 3)).astype(np.float32), rng.normal(size=(16, 1)).astype(np.float32)
        model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False)
        model.save(OUT / f"{name}.keras")
        test_x = rng.normal(size=(4, 3)).astype(np.float32)
        step_x, step_y = rng.normal(size=(8, 3)).astype(np.float32), rng.normal(size=(8, 1)).astype(np.float32)
        cases[name] = {"x": test_x.tolist(), "prediction": model.predict(test_x, verbose=0).tolist()}
        cases[name]["iterations"] = int(model.optimizer.iterations.numpy())
        model.train_on_batch(step_x, step_y)
        cases[name]["step"] = {"x": step_x.tolist(), "y": step_y.tolist()}
        cases[name]["prediction_after"] = model.predict(test_x, verbose=0).tolist()
    return cases


NEWER_OPTIMIZERS = {
    "SGD": {"learning_rate": 0.1},
    "SGD momentum": {"learning_rate": 0.1, "momentum": 0.9},
    "Adam": {},
    "RMSprop": {},
    "RMSprop momentum centered": {"momentum": 0.5, "centered": True},
    "RMSprop centered": {"centered": True},
    "Adagrad": {},
    "Adadelta": {},
    "Adamax": {},
    "Ftrl": {},
    "Nadam": {},
}
"""The newer optimizers (by class, the words after it only name the case) whose ``optimizer/vars`` layout is kept."""


def newer_optimizer_layouts() -> dict:
    """The shapes of ``optimizer/vars`` in order, for Dense(2) then Dense(1) on 3 features after one step: which
    slot follows which (runs of one slot for every weight, or a weight's slots together)."""
    layouts = {}
    with tempfile.TemporaryDirectory() as folder:
        for case, arguments in NEWER_OPTIMIZERS.items():
            keras.backend.clear_session()
            model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,)), keras.layers.Dense(1)])
            model.compile(getattr(keras.optimizers, case.split()[0])(**arguments), "mse")
            model.fit(np.ones((4, 3), np.float32), np.ones((4, 1), np.float32), verbose=0)
            path = os.path.join(folder, "m.keras")
            model.save(path)
            with zipfile.ZipFile(path) as archive, h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as f:
                group = f["optimizer/vars"]
                layouts[case] = {
                    "class": case.split()[0],
                    "arguments": arguments,
                    "shapes": [list(group[str(i)].shape) for i in range(len(group))],
                }
    return layouts


def nested_model_config() -> dict:
    """Keras' ``.keras`` configuration of keras_files_models.nested (how it numbers a model's call nodes)."""
    keras.backend.clear_session()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "nested.keras")
        nested(keras).save(path)
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("config.json"))


def keras_format() -> None:
    """Section keras_format: keras_format.json and newer_*.keras (run alone: ``make_keras_files.py keras_format``)."""
    write(
        "keras_format.json",
        {
            "ipu_teach_to_keras": ipu_teach_keras_format_to_keras(),
            "keras_to_ipu_teach": newer_optimizers_to_ipu_teach(np.random.default_rng(2513)),
            "newer_optimizer_layouts": newer_optimizer_layouts(),
            "nested_model_config": nested_model_config(),
        },
    )


def write(name, content) -> None:
    path = OUT / name
    path.write_text(json.dumps({"made_with": MADE_WITH, **content}, indent=None, separators=(",", ":")) + "\n")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(0)
    sections = sys.argv[1:] or ["files", "keras_format"]
    if "files" in sections:
        write("keras_files.json", {"cases": keras_to_ipu_teach(np.random.default_rng(25))})
        write("ipu_teach_files.json", {"cases": ipu_teach_to_keras(np.random.default_rng(52))})
    if "keras_format" in sections:
        keras.utils.set_random_seed(25)
        keras_format()
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{OUT.relative_to(REPO)}: {len(list(OUT.iterdir()))} files, {total:,} bytes")
    if total > 400_000:
        sys.exit("the fixtures are larger than 400 KB: make the models smaller")


if __name__ == "__main__":
    main()
