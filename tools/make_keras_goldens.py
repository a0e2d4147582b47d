"""Write the Keras golden fixtures that tests/keras/test_keras_goldens.py compares ipu-teach with.

Runs ONLY in a separate reference environment with real TensorFlow and tf-keras (never a run-time or
test dependency of ipu-teach); the tests read the JSON it writes and need nothing else:

    python3 -m venv /work/refenv && /work/refenv/bin/pip install tensorflow-cpu tf-keras
    nice /work/refenv/bin/python tools/make_keras_goldens.py        # writes tests/keras/golden/*.json

Made with TensorFlow and tf-keras 2.21.0 (Keras 2 semantics, as the Keras 2.6 of Graphcore's SDK:
the formulas compared here are the same in both; each section names the Keras source it exercises).
Inputs are drawn from a seeded numpy generator and stored in the fixture with the results, so the
tests feed ipu-teach exactly what Keras was fed. Every fixture is small (a few KB).
"""

import json
import os
import pathlib
import sys

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # Keras 2 (tf-keras), not Keras 3
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
os.environ["CUDA_VISIBLE_DEVICES"] = ""

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "keras" / "golden"


def plain(value):
    """JSON-ready: arrays become (nested) lists of Python numbers."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def write(name, content) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    content = {"made_with": f"tensorflow {tf.__version__}, tf-keras {keras.__version__}", **content}
    path.write_text(json.dumps(plain(content), indent=None, separators=(",", ":")) + "\n")
    print(f"{path.relative_to(OUT.parent.parent.parent)}: {path.stat().st_size} bytes")


def losses(rng) -> None:
    """keras/backend.py categorical_crossentropy, sparse_categorical_crossentropy and binary_crossentropy
    (from_logits False and True) through keras/losses.py, with their gradients; MSE and MAE."""
    n, k = 6, 4
    inputs = {
        # a ReLU's outputs: not probabilities (rows do not sum to 1, zeros and values above 1)
        "not_probabilities": np.maximum(rng.normal(0.5, 1.5, (n, k)), 0).astype(np.float32),
        # a softmax's outputs, some saturated (below epsilon)
        "probabilities": tf.nn.softmax(rng.normal(0, 6, (n, k)).astype(np.float32)).numpy(),
        "logits": rng.normal(0, 3, (n, k)).astype(np.float32),
        # a sigmoid's outputs, with exact 0 and 1 (clipped)
        "sigmoid_outputs": np.concatenate(
            [np.array([[0.0, 1.0, 0.5, 1e-9]], np.float32), 1 / (1 + np.exp(-rng.normal(0, 4, (n - 1, k))))]
        ).astype(np.float32),
    }
    sparse = rng.integers(0, k, n)
    labels = {
        "sparse": sparse.astype(np.int64),
        "one_hot": np.eye(k, dtype=np.float32)[sparse],
        "soft": rng.dirichlet(np.ones(k), n).astype(np.float32),
        # TensorFlow's gradient of softmax_cross_entropy_with_logits is softmax - labels, whatever they sum to
        "unnormalised": rng.uniform(0, 1, (n, k)).astype(np.float32),
        "binary": rng.integers(0, 2, (n, k)).astype(np.float32),
        "regression": rng.normal(0, 1, (n, k)).astype(np.float32),
    }
    upstream = rng.uniform(0.5, 2, n).astype(np.float32)  # d(total)/d(per-sample loss)
    cases = []
    functions = {
        "categorical_crossentropy": keras.losses.categorical_crossentropy,
        "sparse_categorical_crossentropy": keras.losses.sparse_categorical_crossentropy,
        "binary_crossentropy": keras.losses.binary_crossentropy,
        "mean_squared_error": keras.losses.mean_squared_error,
        "mean_absolute_error": keras.losses.mean_absolute_error,
    }
    plan = [
        ("categorical_crossentropy", "one_hot", False, ["not_probabilities", "probabilities"]),
        ("categorical_crossentropy", "soft", False, ["not_probabilities", "probabilities"]),
        ("categorical_crossentropy", "one_hot", True, ["logits"]),
        ("categorical_crossentropy", "soft", True, ["logits"]),
        ("categorical_crossentropy", "unnormalised", True, ["logits"]),
        ("sparse_categorical_crossentropy", "sparse", False, ["not_probabilities", "probabilities"]),
        ("sparse_categorical_crossentropy", "sparse", True, ["logits"]),
        ("binary_crossentropy", "binary", False, ["sigmoid_outputs", "not_probabilities"]),
        ("binary_crossentropy", "soft", False, ["sigmoid_outputs"]),
        ("binary_crossentropy", "binary", True, ["logits"]),
        ("mean_squared_error", "regression", None, ["logits"]),
        ("mean_absolute_error", "regression", None, ["logits", "not_probabilities"]),
    ]
    for name, label_name, from_logits, input_names in plan:
        for input_name in input_names:
            y_pred = tf.constant(inputs[input_name])
            with tf.GradientTape() as tape:
                tape.watch(y_pred)
                kwargs = {} if from_logits is None else {"from_logits": from_logits}
                per_sample = functions[name](tf.constant(labels[label_name]), y_pred, **kwargs)
                total = tf.reduce_sum(per_sample * upstream)
            cases.append(
                {
                    "loss": name,
                    "labels": label_name,
                    "from_logits": from_logits,
                    "y_pred": input_name,
                    "per_sample": per_sample,
                    "gradient": tape.gradient(total, y_pred),
                }
            )
    weights = rng.uniform(0, 2, n).astype(np.float32)
    objects = []
    for cls, label_name, input_name, options in [
        (keras.losses.CategoricalCrossentropy, "one_hot", "probabilities", {}),
        (keras.losses.CategoricalCrossentropy, "one_hot", "logits", {"from_logits": True, "label_smoothing": 0.2}),
        (keras.losses.SparseCategoricalCrossentropy, "sparse", "not_probabilities", {}),
        (keras.losses.BinaryCrossentropy, "binary", "sigmoid_outputs", {}),
        (keras.losses.BinaryCrossentropy, "binary", "sigmoid_outputs", {"label_smoothing": 0.2}),
        (keras.losses.BinaryCrossentropy, "binary", "logits", {"from_logits": True, "label_smoothing": 0.2}),
        (keras.losses.MeanSquaredError, "regression", "logits", {}),
    ]:
        for reduction in ("sum_over_batch_size", "sum", "none"):
            loss = cls(reduction=reduction, **options)
            objects.append(
                {
                    "class": cls.__name__,
                    "options": options,
                    "reduction": reduction,
                    "labels": label_name,
                    "y_pred": input_name,
                    "value": loss(labels[label_name], inputs[input_name], sample_weight=weights),
                }
            )
    write(
        "losses",
        {
            "inputs": inputs,
            "labels": labels,
            "upstream": upstream,
            "cases": cases,
            "sample_weight": weights,
            "objects": objects,
        },
    )


def metrics(rng) -> None:
    """keras/metrics: MeanMetricWrapper and Mean (Reduce, WEIGHTED_MEAN) with sample weights, over two
    update_state calls; then compile(metrics=..., weighted_metrics=...) with fit's sample_weight and
    class_weight, and evaluate's sample_weight."""
    n, k = 8, 3
    sparse = [rng.integers(0, k, n) for _ in range(2)]
    batches = [
        {
            "sparse": s.astype(np.float32),
            "one_hot": np.eye(k, dtype=np.float32)[s],
            "probabilities": rng.dirichlet(np.ones(k), n).astype(np.float32),
            "binary": rng.integers(0, 2, (n, 1)).astype(np.float32),
            "binary_pred": rng.uniform(0, 1, (n, 1)).astype(np.float32),
            "regression": rng.normal(0, 1, (n, k)).astype(np.float32),
            "regression_pred": rng.normal(0, 1, (n, k)).astype(np.float32),
            "sample_weight": rng.uniform(0, 2, n).astype(np.float32).round(3),
        }
        for s in sparse
    ]
    plan = [
        ("CategoricalAccuracy", "one_hot", "probabilities"),
        ("SparseCategoricalAccuracy", "sparse", "probabilities"),
        ("BinaryAccuracy", "binary", "binary_pred"),
        ("Accuracy", "sparse", "sparse"),
        ("MeanSquaredError", "regression", "regression_pred"),
        ("MeanAbsoluteError", "regression", "regression_pred"),
    ]
    results = []
    for cls_name, true_name, pred_name in plan:
        for weight_shape in ("none", "(n,)", "(n, 1)"):
            metric = getattr(keras.metrics, cls_name)()
            for batch in batches:
                weight = None if weight_shape == "none" else batch["sample_weight"]
                if weight_shape == "(n, 1)":
                    weight = weight[:, None]
                metric.update_state(batch[true_name], batch[pred_name], sample_weight=weight)
            results.append(
                {
                    "metric": cls_name,
                    "y_true": true_name,
                    "y_pred": pred_name,
                    "weights": weight_shape,
                    "result": metric.result(),
                }
            )
    mean = keras.metrics.Mean()
    for batch in batches:
        mean.update_state(batch["regression"], sample_weight=batch["sample_weight"])
    results.append(
        {"metric": "Mean", "y_true": "regression", "y_pred": None, "weights": "(n,)", "result": mean.result()}
    )

    # compile(metrics, weighted_metrics) in fit and evaluate
    x = rng.normal(0, 1, (16, 4)).astype(np.float32)
    y = rng.integers(0, k, 16)
    sample_weight = rng.uniform(0, 2, 16).astype(np.float32).round(3)
    class_weight = {0: 0.5, 1: 2.0, 2: 1.0}
    kernel = rng.normal(0, 0.5, (4, k)).astype(np.float32)
    bias = np.zeros(k, np.float32)
    runs = []
    for given in ("sample_weight", "class_weight", "none"):
        model = keras.Sequential([keras.layers.Dense(k, activation="softmax", input_shape=(4,))])
        model.set_weights([kernel, bias])
        model.compile(
            keras.optimizers.SGD(0.1),
            "sparse_categorical_crossentropy",
            metrics=["accuracy", "sparse_categorical_crossentropy"],
            weighted_metrics=["accuracy", "sparse_categorical_crossentropy"],
        )
        extra = {"sample_weight": {"sample_weight": sample_weight}, "class_weight": {"class_weight": class_weight}}
        history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, **extra.get(given, {}))
        evaluation = model.evaluate(x, y, batch_size=4, sample_weight=sample_weight, verbose=0, return_dict=True)
        runs.append(
            {
                "given": given,
                "metrics_names": model.metrics_names,
                "history": history.history,
                "evaluate_with_sample_weight": evaluation,
            }
        )
    write(
        "metrics",
        {
            "batches": batches,
            "results": results,
            "fit": {
                "x": x,
                "y": y,
                "sample_weight": sample_weight,
                "class_weight": class_weight,
                "kernel": kernel,
                "bias": bias,
                "runs": runs,
            },
        },
    )


def normalization(rng) -> None:
    """keras/layers/normalization/batch_normalization.py: moving statistics after a few training calls,
    for 2-D inputs (not fused: tf.nn.moments' variance) and 4-D inputs (fused: FusedBatchNormV3 returns the
    variance with Bessel's correction, kept as is since _bessels_correction_test_only is True); the
    weights BatchNormalization and LayerNormalization have with center=False / scale=False."""
    runs = []
    for shape in [(8, 3), (2, 3, 3, 3), (5, 4, 3)]:
        layer = keras.layers.BatchNormalization(momentum=0.8, epsilon=1e-3)
        xs = [rng.normal(1.0, 2.0, shape).astype(np.float32) for _ in range(3)]
        outputs = [layer(x, training=True) for x in xs]
        runs.append(
            {
                "shape": shape,
                "fused": bool(layer.fused),
                "xs": xs,
                "last_training_output": outputs[-1],
                "moving_mean": layer.moving_mean,
                "moving_variance": layer.moving_variance,
                "inference_output": layer(xs[0], training=False),
            }
        )
    weights = {}
    for cls in (keras.layers.BatchNormalization, keras.layers.LayerNormalization):
        for options in ({}, {"center": False}, {"scale": False}, {"center": False, "scale": False}):
            layer = cls(**options)
            layer.build((None, 3))
            key = f"{cls.__name__}({', '.join(f'{k}={v}' for k, v in options.items())})"
            weights[key] = [v.name.split("/")[-1].split(":")[0] for v in layer.weights]
    x = rng.normal(0, 1, (4, 3)).astype(np.float32)
    ln = keras.layers.LayerNormalization(center=False)
    ln.build((None, 3))
    ln.set_weights([rng.uniform(0.5, 1.5, 3).astype(np.float32)])
    write(
        "normalization",
        {
            "batch_normalization": runs,
            "weights": weights,
            "layer_normalization": {"x": x, "gamma": ln.get_weights()[0], "center_false_output": ln(x)},
        },
    )


def configs(rng) -> None:
    """keras/engine/functional.py get_config (layers with inbound_nodes, input_layers, output_layers) and
    from_config; keras/engine/sequential.py get_config; base_layer.add_weight's defaults."""
    keras.backend.clear_session()
    inputs = keras.Input((4,), name="features")
    other = keras.Input((2,), name="extra")
    shared = keras.layers.Dense(3, activation="relu", name="shared")
    a, b = shared(inputs), shared(keras.layers.Dense(4, name="widen")(other))
    merged = keras.layers.Concatenate(name="merge")([a, b])
    outputs = keras.layers.Dense(2, activation="softmax", name="head")(merged)
    functional = keras.Model([inputs, other], outputs, name="two_inputs")
    sequential = keras.Sequential(
        [keras.layers.Dense(5, activation="relu", input_shape=(3,), name="hidden"), keras.layers.Dense(1, name="out")],
        name="stack",
    )

    def summary(model, config):
        rebuilt = type(model).from_config(config)
        return {
            "config": {
                "name": config["name"],
                "layers": [
                    {
                        "class_name": layer["class_name"],
                        "name": layer["config"]["name"],
                        **({"inbound_nodes": layer["inbound_nodes"]} if "inbound_nodes" in layer else {}),
                    }
                    for layer in config["layers"]
                ],
                **{key: config[key] for key in ("input_layers", "output_layers") if key in config},
            },
            "count_params": model.count_params(),
            "rebuilt_count_params": rebuilt.count_params(),
            "rebuilt_layers": [layer.name for layer in rebuilt.layers],
        }

    layer = keras.layers.Layer(name="custom")
    weight = layer.add_weight(shape=(200, 100))
    write(
        "configs",
        {
            "functional": summary(functional, functional.get_config()),
            "sequential": summary(sequential, sequential.get_config()),
            "add_weight": {
                "name": weight.name,
                "max_abs": float(np.abs(weight.numpy()).max()),
                "glorot_limit": float(np.sqrt(6 / (200 + 100))),
                "int_weight": layer.add_weight(shape=(3,), dtype="int32"),
            },
        },
    )


def _subclassed_model(train_step=False):
    """The models of tests/keras/subclassed_golden_models.py, made with tf-keras."""
    sys.path.insert(0, str(OUT.parent))
    import subclassed_golden_models  # noqa: PLC0415 (the tests' own module, found once OUT is known)

    _, net, doubled_loss = subclassed_golden_models.classes(keras, tf)
    return doubled_loss() if train_step else net()


def subclassed(rng) -> None:
    """keras/engine/training.py for a subclassed Model: layers tracked from attributes (also in lists and dicts),
    weights in Keras' order, summary's rows ("multiple"), fit/evaluate/predict from given weights, the
    call context giving a nested layer fit's ``training``; and a train_step override (Keras 2's semantics)."""
    x = rng.normal(0, 1, (64, 4)).astype(np.float32)
    y = rng.integers(0, 3, 64)
    cases = {}
    for name, train_step in (("fit", False), ("train_step", True)):
        keras.backend.clear_session()
        model = _subclassed_model(train_step)
        model(x[:1])
        weights = [  # a variance is positive
            (rng.uniform(0.5, 1.5, w.shape) if "variance" in w.name else rng.normal(0, 0.5, w.shape)).astype(np.float32)
            for w in model.weights
        ]
        model.set_weights(weights)
        rows = []
        model.summary(print_fn=rows.append)
        model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics=["accuracy"])
        history = model.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
        cases[name] = {
            "weights": weights,
            "weight_names": [w.name.split("/", 1)[1] for w in model.weights],
            "trainable_names": [w.name.split("/", 1)[1] for w in model.trainable_variables],
            "layers": [layer.name for layer in model.layers],
            "summary": rows,
            "history": history.history,
            "evaluate": model.evaluate(x, y, batch_size=16, verbose=0),
            "predict": model.predict(x[:4], verbose=0),
        }
    write("subclassed", {"x": x, "y": y, "cases": cases})


LAYER_CASES = [
    # (id, layer class, arguments, input shape); every case also sets Keras' own weights to seeded values
    ("ReLU()", "ReLU", {}, (2, 5)),
    ("ReLU(max_value=6)", "ReLU", {"max_value": 6.0}, (2, 5)),
    (
        "ReLU(max_value, negative_slope, threshold)",
        "ReLU",
        {"max_value": 1.0, "negative_slope": 0.1, "threshold": 0.5},
        (2, 5),
    ),
    ("ReLU(negative_slope)", "ReLU", {"negative_slope": 0.2}, (2, 5)),
    ("ReLU(threshold)", "ReLU", {"threshold": 0.3}, (2, 5)),
    ("LeakyReLU()", "LeakyReLU", {}, (2, 5)),
    ("LeakyReLU(alpha=0.1)", "LeakyReLU", {"alpha": 0.1}, (2, 5)),
    ("ThresholdedReLU(theta=0.5)", "ThresholdedReLU", {"theta": 0.5}, (2, 5)),
    ("ELU(alpha=0.7)", "ELU", {"alpha": 0.7}, (2, 5)),
    ("PReLU()", "PReLU", {}, (2, 3, 4)),
    ("PReLU(shared_axes=[1, 2])", "PReLU", {"shared_axes": [1, 2]}, (2, 3, 4, 2)),
    ("Conv2D(dilation_rate=2)", "Conv2D", {"filters": 3, "kernel_size": 3, "dilation_rate": 2}, (1, 7, 6, 2)),
    (
        "Conv2D(dilation_rate=(1, 2), same)",
        "Conv2D",
        {"filters": 3, "kernel_size": (2, 3), "dilation_rate": (1, 2), "padding": "same"},
        (1, 5, 6, 2),
    ),
    (
        "Conv1D(dilation_rate=2, causal)",
        "Conv1D",
        {"filters": 3, "kernel_size": 3, "dilation_rate": 2, "padding": "causal"},
        (2, 9, 2),
    ),
    (
        "Conv1D(dilation_rate=3, same)",
        "Conv1D",
        {"filters": 2, "kernel_size": 2, "dilation_rate": 3, "padding": "same"},
        (2, 8, 3),
    ),
    (
        "Conv2DTranspose(strides=2, same)",
        "Conv2DTranspose",
        {"filters": 3, "kernel_size": 3, "strides": 2, "padding": "same"},
        (1, 3, 3, 2),
    ),
    (
        "Conv2DTranspose(strides=2, valid)",
        "Conv2DTranspose",
        {"filters": 3, "kernel_size": 3, "strides": 2},
        (1, 3, 3, 2),
    ),
    (
        "Conv2DTranspose((2, 3), strides=(3, 1))",
        "Conv2DTranspose",
        {"filters": 2, "kernel_size": (2, 3), "strides": (3, 1)},
        (1, 3, 4, 3),
    ),
    (
        "Conv2DTranspose(kernel 1, strides=3, same)",
        "Conv2DTranspose",
        {"filters": 2, "kernel_size": 1, "strides": 3, "padding": "same"},
        (1, 3, 2, 2),
    ),
    (
        "Conv2DTranspose(dilation_rate=2, same)",
        "Conv2DTranspose",
        {"filters": 2, "kernel_size": 3, "dilation_rate": 2, "padding": "same", "activation": "relu"},
        (1, 5, 4, 3),
    ),
    ("DepthwiseConv2D(depth_multiplier=2)", "DepthwiseConv2D", {"kernel_size": 3, "depth_multiplier": 2}, (1, 6, 5, 3)),
    (
        "DepthwiseConv2D(strides=2, same)",
        "DepthwiseConv2D",
        {"kernel_size": (3, 2), "strides": 2, "padding": "same"},
        (1, 7, 6, 2),
    ),
    (
        "DepthwiseConv2D(dilation_rate=2, same)",
        "DepthwiseConv2D",
        {"kernel_size": 3, "dilation_rate": 2, "padding": "same", "use_bias": False},
        (1, 6, 6, 2),
    ),
    (
        "SeparableConv2D(depth_multiplier=2, same)",
        "SeparableConv2D",
        {"filters": 4, "kernel_size": 3, "depth_multiplier": 2, "padding": "same"},
        (1, 4, 5, 3),
    ),
    (
        "SeparableConv2D(strides=2, relu)",
        "SeparableConv2D",
        {"filters": 3, "kernel_size": 2, "strides": 2, "activation": "relu"},
        (1, 6, 7, 2),
    ),
    ("UpSampling2D((2, 3))", "UpSampling2D", {"size": (2, 3)}, (1, 3, 2, 2)),
    ("Cropping2D(((1, 0), (2, 1)))", "Cropping2D", {"cropping": ((1, 0), (2, 1))}, (2, 4, 5, 2)),
    ("Rescaling(1 / 127.5, offset=-1)", "Rescaling", {"scale": 1 / 127.5, "offset": -1.0}, (2, 3, 4)),
    (
        "Normalization(mean, variance)",
        "Normalization",
        {"mean": [0.5, -1.0, 2.0], "variance": [4.0, 0.25, 1.0]},
        (4, 3),
    ),
    ("GRU(reset_after=False)", "GRU", {"units": 3, "reset_after": False}, (2, 4, 3)),
    (
        "GRU(reset_after=False, return_sequences, go_backwards)",
        "GRU",
        {"units": 2, "reset_after": False, "return_sequences": True, "go_backwards": True},
        (2, 3, 2),
    ),
    ("GRU(reset_after=False, use_bias=False)", "GRU", {"units": 2, "reset_after": False, "use_bias": False}, (1, 3, 2)),
    (
        "Bidirectional(LSTM(return_sequences))",
        "Bidirectional",
        {"layer": {"class_name": "LSTM", "config": {"units": 3, "return_sequences": True}}},
        (2, 4, 2),
    ),
    (
        "Bidirectional(GRU, sum)",
        "Bidirectional",
        {"layer": {"class_name": "GRU", "config": {"units": 2}}, "merge_mode": "sum"},
        (2, 3, 3),
    ),
    (
        "Bidirectional(GRU(reset_after=False, return_sequences), mul)",
        "Bidirectional",
        {
            "layer": {"class_name": "GRU", "config": {"units": 2, "reset_after": False, "return_sequences": True}},
            "merge_mode": "mul",
        },
        (1, 3, 2),
    ),
    (
        "Bidirectional(LSTM, ave)",
        "Bidirectional",
        {"layer": {"class_name": "LSTM", "config": {"units": 2}}, "merge_mode": "ave"},
        (2, 3, 2),
    ),
]


def shortest(value):
    """Float32 values (arrays, tensors, lists of them) as the float64 numbers of their shortest repr: the
    same float32 when read back, in about half the characters of the float64 repr."""
    if isinstance(value, dict):
        return {k: shortest(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shortest(v) for v in value]
    if isinstance(value, (tf.Tensor, tf.Variable)):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return np.array([float(str(v)) for v in value.ravel()]).reshape(value.shape)
    return value


def made_layer(class_name, arguments):
    """``keras.layers.<class_name>(**arguments)``, a wrapped layer given as ``{"class_name", "config"}``."""
    wrapped = {"layer": keras.layers.deserialize(arguments["layer"])} if "layer" in arguments else {}
    return getattr(keras.layers, class_name)(**{**arguments, **wrapped})


def seeded_weights(layer, rng) -> list:
    """Sets every weight of ``layer`` (or a model) to seeded values, and returns them."""
    weights = [rng.normal(0, 0.5, w.shape).astype(np.float32) for w in layer.weights]
    layer.set_weights(weights)
    return weights


def output_and_gradients(layer, x, rng, watch_input=False):
    """``layer(x)`` in training mode, seeded ``upstream`` weights, and the gradients of ``sum(upstream *
    output)`` with respect to ``x`` (if watched) and every trainable weight (IndexedSlices made dense)."""
    with tf.GradientTape() as tape:
        if watch_input:
            tape.watch(x)
        y = layer(x, training=True)
        upstream = rng.uniform(0.5, 1.5, y.shape).astype(np.float32)
        total = tf.reduce_sum(y * upstream)
    gradients = tape.gradient(total, ([x] if watch_input else []) + layer.trainable_weights)
    return y, upstream, [tf.convert_to_tensor(g) for g in gradients]


def layers_breadth(rng) -> None:
    """tf-keras layers/activation (ReLU's options through backend.relu, LeakyReLU, ThresholdedReLU, ELU,
    PReLU), layers/convolutional (dilation_rate, Conv2DTranspose's deconv_output_length, DepthwiseConv2D,
    SeparableConv2D), layers/reshaping (UpSampling2D, Cropping2D) and layers/preprocessing (Rescaling,
    Normalization with adapt): outputs and the gradients of sum(upstream * output) with respect to the
    inputs and every weight, from seeded weights."""
    cases = []
    for case_id, class_name, arguments, shape in LAYER_CASES:
        layer = made_layer(class_name, arguments)
        x = rng.normal(0, 1, shape).astype(np.float32)
        layer.build(shape)
        weights = seeded_weights(layer, rng)
        y, upstream, gradients = output_and_gradients(layer, tf.constant(x), rng, watch_input=True)
        cases.append(
            {
                "id": case_id,
                "class": class_name,
                "arguments": arguments,
                "x": x,
                "weight_names": [w.name.split("/")[-1].split(":")[0] for w in layer.weights],
                "weights": weights,
                "upstream": upstream,
                "output": y,
                "input_gradient": gradients[0],
                "weight_gradients": gradients[1:],
            }
        )
    adapted = []
    for axis in (-1, None, (1, 2)):
        data = rng.normal(2.0, 3.0, (6, 3, 4)).astype(np.float32)
        layer = keras.layers.Normalization(axis=axis)
        layer.adapt(data)
        x = rng.normal(2.0, 3.0, (2, 3, 4)).astype(np.float32)
        adapted.append(
            {
                "axis": axis,
                "data": data,
                "x": x,
                "weight_names": [w.name.split("/")[-1].split(":")[0] for w in layer.weights],
                "weights": [w.numpy() for w in layer.weights],
                "output": layer(x),
            }
        )
    write("layers_breadth", shortest({"cases": cases, "normalization_adapt": adapted}))


def regularized_model():
    """The model of the regularizers' fixture (tests/keras/test_regularizers.py builds the same)."""
    layers, regularizers = keras.layers, keras.regularizers
    inputs = keras.Input((5, 5, 2))
    x = layers.Conv2D(3, 3, kernel_regularizer=regularizers.l2(0.05), bias_regularizer="l1")(inputs)
    x = layers.PReLU(alpha_regularizer=regularizers.l2(0.1))(x)
    x = layers.SeparableConv2D(
        2, 2, depthwise_regularizer=regularizers.l1(0.01), pointwise_regularizer=regularizers.l2(0.02)
    )(x)
    x = layers.Flatten()(x)
    x = layers.Dense(4, activation="relu", activity_regularizer=regularizers.l1_l2(0.01, 0.02))(x)
    outputs = layers.Dense(
        3, activation="softmax", kernel_regularizer="l1_l2", bias_regularizer=regularizers.L1L2(l2=0.5)
    )(x)
    return keras.Model(inputs, outputs)


def regularizers(rng) -> None:
    """keras/regularizers.py (L1, L2, L1L2, the names' defaults) through base_layer.add_weight's
    regularizer and the activity regularizer (its penalty over the batch size), in Model.losses, and
    compile_utils.LossesContainer adding their sum to the loss fit minimises and reports."""
    keras.backend.clear_session()
    model = regularized_model()
    weights = [rng.normal(0, 0.5, w.shape).astype(np.float32) for w in model.weights]
    model.set_weights(weights)
    x = rng.normal(0, 1, (8, 5, 5, 2)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    model(x, training=True)
    losses = [float(loss) for loss in model.losses]
    model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    write(
        "regularizers",
        shortest(
            {
                "x": x,
                "y": y,
                "weights": weights,
                "losses_after_call": losses,
                "history": history.history,
                "trained_weights": model.get_weights(),
                "evaluate": model.evaluate(x, y, batch_size=4, verbose=0),
                "configs": {
                    "l1_l2": keras.regularizers.get("l1_l2").get_config(),
                    "L1L2()": keras.regularizers.L1L2().get_config(),
                    "l2": keras.regularizers.get("l2").get_config(),
                    "serialized": keras.regularizers.serialize(keras.regularizers.l1(0.3)),
                },
            }
        ),
    )


MASKED_MODELS = {
    # name: the layers after Embedding(7, 3, mask_zero=True), as (class name, arguments)
    "LSTM(return_sequences) then GRU": [("LSTM", {"units": 3, "return_sequences": True}), ("GRU", {"units": 2})],
    "GRU(go_backwards, reset_after=False)": [("GRU", {"units": 2, "go_backwards": True, "reset_after": False})],
    "Dense then LSTM(return_sequences)": [("Dense", {"units": 2}), ("LSTM", {"units": 2, "return_sequences": True})],
    "Bidirectional(LSTM(return_sequences)) then Bidirectional(GRU, sum)": [
        ("Bidirectional", {"layer": {"class_name": "LSTM", "config": {"units": 2, "return_sequences": True}}}),
        ("Bidirectional", {"layer": {"class_name": "GRU", "config": {"units": 2}}, "merge_mode": "sum"}),
    ],
}


def masking(rng) -> None:
    """keras/layers/core/embedding.py compute_mask (mask_zero), the mask carried through layers that
    support masking (Dense) and consumed by backend.rnn in LSTM and GRU (a masked timestep keeps the
    state and repeats the last output; Bidirectional asks for zeros there, zero_output_for_mask): padded
    sequences, left and right, outputs and the gradients of every weight; return_state's states with a mask."""
    ids = np.array([[3, 1, 4, 0, 0], [0, 0, 2, 6, 5], [1, 2, 3, 4, 5]], np.int32)
    cases = []
    for name, stack in MASKED_MODELS.items():
        inputs = keras.Input((ids.shape[1],), dtype="int32")
        x = keras.layers.Embedding(7, 3, mask_zero=True)(inputs)
        for class_name, arguments in stack:
            x = made_layer(class_name, arguments)(x)
        model = keras.Model(inputs, x)
        weights = seeded_weights(model, rng)
        y, upstream, gradients = output_and_gradients(model, ids, rng)
        cases.append(
            {
                "id": name,
                "stack": stack,
                "weights": weights,
                "upstream": upstream,
                "output": y,
                "weight_gradients": gradients,
            }
        )
    states = []
    for class_name, arguments in [
        ("LSTM", {"units": 3, "return_sequences": True, "return_state": True}),
        ("GRU", {"units": 2, "return_state": True, "reset_after": False, "go_backwards": True}),
    ]:
        embedding, layer = keras.layers.Embedding(7, 3, mask_zero=True), made_layer(class_name, arguments)
        layer(embedding(ids))  # builds both, before their weights are set
        weights = seeded_weights(embedding, rng) + seeded_weights(layer, rng)
        states.append(
            {"class": class_name, "arguments": arguments, "weights": weights, "outputs": layer(embedding(ids))}
        )
    write("masking", shortest({"ids": ids, "cases": cases, "states": states}))


def main() -> None:
    keras.utils.set_random_seed(0)
    for section in (losses, metrics, normalization, configs, subclassed, layers_breadth, regularizers, masking):
        section(np.random.default_rng(sum(map(ord, section.__name__))))
    total = sum(p.stat().st_size for p in OUT.glob("*.json"))
    print(f"{total} bytes in all")
    if total > 200_000:
        sys.exit("the fixtures are larger than 200 KB: make the inputs smaller")


if __name__ == "__main__":
    main()
