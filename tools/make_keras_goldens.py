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


def value_and_gradient(loss, y_true, y_pred, upstream=None, **kwargs):
    """``loss(y_true, y_pred, **kwargs)`` and TensorFlow's gradient of its sum with respect to ``y_pred``
    (weighted by ``upstream``, one weight per value)."""
    y_pred = tf.constant(y_pred)
    with tf.GradientTape() as tape:
        tape.watch(y_pred)
        values = loss(tf.constant(y_true), y_pred, **kwargs)
        total = tf.reduce_sum(values if upstream is None else values * upstream[: values.shape[0]])
    return values, tape.gradient(total, y_pred)


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
            kwargs = {} if from_logits is None else {"from_logits": from_logits}
            case = {"loss": name, "labels": label_name, "from_logits": from_logits, "y_pred": input_name}
            per_sample, gradient = value_and_gradient(
                functions[name], labels[label_name], inputs[input_name], upstream, **kwargs
            )
            cases.append({**case, "per_sample": per_sample, "gradient": gradient})
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


def _golden_models():
    """tests/keras/golden_models.py: the models the fixtures and the tests build alike, from the keras given."""
    sys.path.insert(0, str(OUT.parent))
    import golden_models  # noqa: PLC0415 (the tests' own module, found once OUT is known)

    return golden_models


def _subclassed_model(train_step=False):
    """The models written as classes of tests/keras/golden_models.py, made with tf-keras."""
    _, net, doubled_loss = _golden_models().classes(keras, tf)
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
    if isinstance(value, (list, tuple)):
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


def regularizers(rng) -> None:
    """keras/regularizers.py (L1, L2, L1L2, the names' defaults) through base_layer.add_weight's
    regularizer and the activity regularizer (its penalty over the batch size), in Model.losses, and
    compile_utils.LossesContainer adding their sum to the loss fit minimises and reports."""
    keras.backend.clear_session()
    model = _golden_models().regularized_model(keras)
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


class _Warmup(keras.optimizers.schedules.LearningRateSchedule):
    """A LearningRateSchedule subclass of one's own (tests/keras/test_keras_goldens.py writes the same one):
    a linear warm-up to 0.1 over 5 steps, then 0.1 / sqrt(step / 5)."""

    def __call__(self, step):
        step = tf.cast(step, tf.float32) + 1.0
        return 0.1 * tf.minimum(step / 5.0, tf.math.rsqrt(step / 5.0))

    def get_config(self):
        return {}


def _schedule(name, config):
    return getattr(keras.optimizers.schedules, name.partition("(")[0])(**config)


def optimizers_breadth(rng) -> None:
    """keras/optimizers/legacy (Keras 2.6's optimizer_v2): Adadelta, Adamax, Nadam, Ftrl, the options every
    optimizer takes (clipnorm, clipvalue, global_clipnorm, decay) and keras.optimizers.schedules as
    learning_rate: 20 apply_gradients steps from the same weights and gradients; each schedule's values;
    get_config before any step."""
    legacy = keras.optimizers.legacy
    weights = {"kernel": rng.normal(0, 1, (2, 3)).astype(np.float32), "bias": rng.normal(0, 1, 3).astype(np.float32)}
    steps, kept = 20, (1, 2, 5, 20)  # the steps whose weights are kept (all 20 are taken)
    gradients = [
        {
            name: (rng.normal(0, 1, w.shape) * rng.choice([0.1, 1.0, 3.0])).astype(np.float32)
            for name, w in weights.items()
        }
        for _ in range(steps)
    ]
    schedule_plan = {  # the class is the name up to "("
        "ExponentialDecay": {"initial_learning_rate": 0.1, "decay_steps": 4, "decay_rate": 0.5},
        "ExponentialDecay(staircase)": {
            "initial_learning_rate": 0.1,
            "decay_steps": 4,
            "decay_rate": 0.5,
            "staircase": True,
        },
        "PiecewiseConstantDecay": {"boundaries": [5, 10], "values": [0.1, 0.05, 0.01]},
        "PolynomialDecay": {"initial_learning_rate": 0.1, "decay_steps": 12, "end_learning_rate": 0.01, "power": 2.0},
        "PolynomialDecay(cycle)": {
            "initial_learning_rate": 0.1,
            "decay_steps": 6,
            "end_learning_rate": 0.01,
            "power": 0.5,
            "cycle": True,
        },
        "InverseTimeDecay": {"initial_learning_rate": 0.1, "decay_steps": 3, "decay_rate": 0.7},
        "InverseTimeDecay(staircase)": {
            "initial_learning_rate": 0.1,
            "decay_steps": 3,
            "decay_rate": 0.7,
            "staircase": True,
        },
        "CosineDecay": {"initial_learning_rate": 0.1, "decay_steps": 15, "alpha": 0.1},
    }
    schedule_values = {
        name: {"config": config, "values": [float(_schedule(name, config)(step)) for step in range(25)]}
        for name, config in schedule_plan.items()
    }
    schedule_values["Warmup"] = {"config": {}, "values": [float(_Warmup()(step)) for step in range(25)]}
    plan = [
        ("Adadelta", {}),
        ("Adadelta", {"learning_rate": 1.0, "rho": 0.9}),
        ("Adamax", {"learning_rate": 0.01}),
        ("Adamax", {"learning_rate": 0.02, "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-3}),
        ("Nadam", {"learning_rate": 0.01}),
        ("Nadam", {"learning_rate": 0.02, "beta_1": 0.8, "schedule_decay": 0.05}),
        ("Ftrl", {"learning_rate": 0.1}),
        (
            "Ftrl",
            {"learning_rate": 0.1, "l1_regularization_strength": 0.05, "l2_regularization_strength": 0.01, "beta": 0.1},
        ),
        (
            "Ftrl",
            {
                "learning_rate": 0.2,
                "learning_rate_power": -0.7,
                "initial_accumulator_value": 0.3,
                "l2_shrinkage_regularization_strength": 0.02,
                "l1_regularization_strength": 0.01,
            },
        ),
        ("SGD", {"learning_rate": 0.05, "clipnorm": 0.5}),
        ("SGD", {"learning_rate": 0.05, "momentum": 0.9, "decay": 0.05}),
        ("Adam", {"learning_rate": 0.01, "clipvalue": 0.2}),
        ("Adam", {"learning_rate": 0.01, "decay": 0.1, "global_clipnorm": 1.0}),
        ("RMSprop", {"learning_rate": 0.01, "global_clipnorm": 2.0}),
        ("Adagrad", {"learning_rate": 0.1, "clipnorm": 1.0, "clipvalue": 0.5}),
        ("Adadelta", {"learning_rate": 1.0, "decay": 0.02}),
        ("Ftrl", {"learning_rate": 0.1, "decay": 0.02, "clipvalue": 0.5}),
    ]
    plan += [("SGD", {"learning_rate": {"schedule": name}}) for name in schedule_values]
    plan += [("Adam", {"learning_rate": {"schedule": "PiecewiseConstantDecay"}, "clipnorm": 1.0})]
    plan += [("Adamax", {"learning_rate": {"schedule": "CosineDecay"}})]
    runs = []
    for cls_name, options in plan:
        arguments = dict(options)
        if isinstance(options.get("learning_rate"), dict):
            name = options["learning_rate"]["schedule"]
            arguments["learning_rate"] = _Warmup() if name == "Warmup" else _schedule(name, schedule_plan[name])
        optimizer = getattr(legacy, cls_name)(**arguments)
        config = optimizer.get_config()
        variables = {name: tf.Variable(w) for name, w in weights.items()}
        trajectory = {}
        for step, step_gradients in enumerate(gradients, start=1):
            optimizer.apply_gradients([(tf.constant(step_gradients[n]), v) for n, v in variables.items()])
            if step in kept:
                trajectory[step] = {name: shortest(v.numpy()) for name, v in variables.items()}
        runs.append({"optimizer": cls_name, "options": options, "config": config, "trajectory": trajectory})
    defaults = {
        name: getattr(legacy, name)().get_config()
        for name in ("SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl")
    }
    given = {"weights": weights, "gradients": gradients, "schedules": schedule_values}
    write("optimizers_breadth", shortest({**given, "runs": runs, "default_configs": defaults}))


def losses_breadth(rng) -> None:
    """keras/losses.py: MAPE, MSLE, Huber, LogCosh, Poisson, KLDivergence, Hinge, SquaredHinge,
    CategoricalHinge and CosineSimilarity, as functions (per-sample values and TensorFlow's gradients) and as
    classes with each reduction and sample weights; BCE and CCE label_smoothing. The inputs include the
    edge cases where a formula switches (Huber at |e| = delta, a hinge margin of exactly 0, tied maxima,
    values clipped at epsilon or 1, zero labels for MAPE)."""
    n, k = 6, 4
    regression = rng.normal(0, 1.5, (n, k)).astype(np.float32)
    regression[0, :2] = [0.0, 0.0]  # MAPE's zero labels
    inputs = {
        "regression": rng.normal(0, 1.5, (n, k)).astype(np.float32),
        "positive": rng.uniform(0, 3, (n, k)).astype(np.float32),
        "probabilities": tf.nn.softmax(rng.normal(0, 2, (n, k)).astype(np.float32)).numpy(),
        "edges": np.array(
            [[1.0, -1.0, 2.0, 1e-9], [0.0, 0.5, 1.5, -2.0], [3.0, 3.0, 1.0, 0.0]] + [[0.25, 1.25, -0.5, 2.5]] * 3,
            np.float32,
        ),
    }
    one_hot = np.eye(k, dtype=np.float32)[rng.integers(0, k, n)]
    labels = {
        "regression": regression,
        "counts": rng.poisson(1.5, (n, k)).astype(np.float32),
        "binary": rng.integers(0, 2, (n, k)).astype(np.float32),
        "signed": rng.choice([-1.0, 1.0], (n, k)).astype(np.float32),
        "one_hot": one_hot,
        "probabilities": rng.dirichlet(np.ones(k), n).astype(np.float32),
        # Huber: |e| exactly delta (1) against "edges"; hinge: margins exactly 0
        "edges": np.array(
            [[0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]] + [[0.0, 1.0, 0.0, 0.0]] * 3,
            np.float32,
        ),
    }
    upstream = rng.uniform(0.5, 2, n).astype(np.float32)
    plan = [
        ("mean_absolute_percentage_error", {}, "regression", ["regression", "edges"]),
        ("mean_squared_logarithmic_error", {}, "counts", ["positive", "regression", "edges"]),
        ("huber", {}, "regression", ["regression"]),
        ("huber", {}, "edges", ["edges"]),
        ("huber", {"delta": 0.5}, "regression", ["regression", "edges"]),
        ("log_cosh", {}, "regression", ["regression", "edges"]),
        ("poisson", {}, "counts", ["positive"]),
        ("kl_divergence", {}, "probabilities", ["probabilities", "positive", "edges"]),
        ("hinge", {}, "binary", ["regression", "edges"]),
        ("hinge", {}, "signed", ["regression"]),
        ("hinge", {}, "edges", ["edges"]),
        ("squared_hinge", {}, "binary", ["regression", "edges"]),
        ("squared_hinge", {}, "signed", ["regression"]),
        ("categorical_hinge", {}, "one_hot", ["regression", "probabilities", "edges"]),
        ("categorical_hinge", {}, "edges", ["edges"]),
        ("cosine_similarity", {}, "regression", ["regression", "edges"]),
        ("cosine_similarity", {"axis": 0}, "regression", ["regression"]),
    ]
    cases = []
    for name, options, label_name, input_names in plan:
        for input_name in input_names:
            case = {"loss": name, "options": options, "labels": label_name, "y_pred": input_name}
            loss = getattr(keras.losses, name)
            per_sample, gradient = value_and_gradient(loss, labels[label_name], inputs[input_name], upstream, **options)
            cases.append({**case, "per_sample": per_sample, "gradient": gradient})
    weights = rng.uniform(0, 2, n).astype(np.float32)
    objects = []
    for cls, label_name, input_name, options in [
        (keras.losses.MeanAbsolutePercentageError, "regression", "regression", {}),
        (keras.losses.MeanSquaredLogarithmicError, "counts", "positive", {}),
        (keras.losses.Huber, "regression", "regression", {"delta": 0.7}),
        (keras.losses.LogCosh, "regression", "regression", {}),
        (keras.losses.Poisson, "counts", "positive", {}),
        (keras.losses.KLDivergence, "probabilities", "probabilities", {}),
        (keras.losses.Hinge, "binary", "regression", {}),
        (keras.losses.SquaredHinge, "signed", "regression", {}),
        (keras.losses.CategoricalHinge, "one_hot", "regression", {}),
        (keras.losses.CosineSimilarity, "regression", "regression", {}),
        (keras.losses.BinaryCrossentropy, "binary", "probabilities", {"label_smoothing": 0.1}),
        (keras.losses.BinaryCrossentropy, "probabilities", "regression", {"from_logits": True, "label_smoothing": 0.3}),
        (keras.losses.CategoricalCrossentropy, "one_hot", "probabilities", {"label_smoothing": 0.1}),
        (
            keras.losses.CategoricalCrossentropy,
            "probabilities",
            "regression",
            {"from_logits": True, "label_smoothing": 0.4},
        ),
    ]:
        for reduction in ("sum_over_batch_size", "sum", "none"):
            loss = cls(reduction=reduction, **options)
            value, gradient = value_and_gradient(loss, labels[label_name], inputs[input_name], sample_weight=weights)
            given = {"options": options, "reduction": reduction, "labels": label_name, "y_pred": input_name}
            objects.append({"class": cls.__name__, **given, "value": value, "gradient_of_sum": gradient})
            objects[-1]["name"] = cls(**options).name
    given = {"inputs": inputs, "labels": labels, "upstream": upstream, "sample_weight": weights}
    write("losses_breadth", shortest({**given, "cases": cases, "objects": objects}))


def metrics_breadth(rng) -> None:
    """keras/metrics: AUC (ROC and PR, each summation, num_thresholds, thresholds, multi_label, label_weights,
    from_logits), Precision and Recall (thresholds, top_k, class_id), TopKCategoricalAccuracy,
    SparseTopKCategoricalAccuracy and MeanIoU, over two weighted update_state calls; then in
    compile(metrics=...) through fit and evaluate, with Keras' names."""
    n, k = 10, 4
    batches = []
    for _ in range(2):
        probabilities = rng.dirichlet(np.ones(k), n).astype(np.float32)
        probabilities[0] = [0.5, 0.25, 0.25, 0.0]  # exactly on a threshold, and a tie
        classes = rng.integers(0, k, n)
        batch = {
            "probabilities": probabilities,
            "scores": rng.uniform(0, 1, (n, k)).round(2).astype(np.float32),  # ties between rows
            "logits": rng.normal(0, 2, (n, k)).astype(np.float32),
            "sparse": classes.astype(np.float32),
            "sparse_column": classes[:, None].astype(np.float32),
            "one_hot": np.eye(k, dtype=np.float32)[classes],
            "multi_hot": rng.integers(0, 2, (n, k)).astype(np.float32),
            "predicted_classes": rng.integers(0, k - 1, n).astype(np.float32),  # class 3 never predicted
            "sample_weight": rng.uniform(0, 2, n).round(3).astype(np.float32),
            "regression": rng.normal(0, 1, (n, k)).astype(np.float32),
            "regression_pred": rng.normal(0, 1, (n, k)).astype(np.float32),
            "counts": rng.poisson(1.5, (n, k)).astype(np.float32),
            "positive": rng.uniform(0.1, 3, (n, k)).astype(np.float32),
        }
        batches.append(batch)
    metrics = keras.metrics
    plan = [
        ("AUC", {}, "multi_hot", "scores"),
        ("AUC", {"num_thresholds": 7}, "multi_hot", "scores"),
        ("AUC", {"summation_method": "minoring"}, "one_hot", "probabilities"),
        ("AUC", {"summation_method": "majoring", "num_thresholds": 11}, "one_hot", "probabilities"),
        ("AUC", {"curve": "PR"}, "multi_hot", "scores"),
        ("AUC", {"curve": "PR", "num_thresholds": 9}, "one_hot", "probabilities"),
        ("AUC", {"curve": "PR", "summation_method": "minoring"}, "multi_hot", "scores"),
        ("AUC", {"thresholds": [0.1, 0.3, 0.5, 0.7]}, "multi_hot", "scores"),
        ("AUC", {"multi_label": True}, "multi_hot", "scores"),
        ("AUC", {"multi_label": True, "label_weights": [1.0, 0.5, 2.0, 0.0]}, "multi_hot", "scores"),
        ("AUC", {"multi_label": True, "curve": "PR", "num_labels": 4}, "multi_hot", "scores"),
        ("AUC", {"label_weights": [1.0, 0.5, 2.0, 0.0]}, "multi_hot", "scores"),
        ("AUC", {"from_logits": True}, "multi_hot", "logits"),
        ("Precision", {}, "multi_hot", "scores"),
        ("Precision", {"thresholds": [0.0, 0.25, 0.5, 0.9, 1.0]}, "one_hot", "probabilities"),
        ("Precision", {"top_k": 2}, "one_hot", "probabilities"),
        ("Precision", {"class_id": 1}, "multi_hot", "scores"),
        ("Precision", {"top_k": 1, "class_id": 2}, "one_hot", "probabilities"),
        ("Recall", {}, "multi_hot", "scores"),
        ("Recall", {"thresholds": [0.0, 0.25, 0.5, 0.9, 1.0]}, "one_hot", "probabilities"),
        ("Recall", {"top_k": 2}, "one_hot", "probabilities"),
        ("Recall", {"class_id": 3, "thresholds": 0.3}, "multi_hot", "scores"),
        ("TopKCategoricalAccuracy", {}, "one_hot", "probabilities"),
        ("TopKCategoricalAccuracy", {"k": 1}, "one_hot", "probabilities"),
        ("TopKCategoricalAccuracy", {"k": 2}, "one_hot", "scores"),
        ("SparseTopKCategoricalAccuracy", {"k": 2}, "sparse", "probabilities"),
        ("SparseTopKCategoricalAccuracy", {"k": 1}, "sparse_column", "scores"),
        ("MeanIoU", {"num_classes": 4}, "sparse", "predicted_classes"),
        ("MeanAbsolutePercentageError", {}, "regression", "regression_pred"),
        ("MeanSquaredLogarithmicError", {}, "counts", "positive"),
        ("Hinge", {}, "multi_hot", "regression_pred"),
        ("SquaredHinge", {}, "multi_hot", "regression_pred"),
        ("CategoricalHinge", {}, "one_hot", "regression_pred"),
        ("KLDivergence", {}, "probabilities", "scores"),
        ("Poisson", {}, "counts", "positive"),
        ("LogCoshError", {}, "regression", "regression_pred"),
        ("CosineSimilarity", {}, "regression", "regression_pred"),
        ("RootMeanSquaredError", {}, "regression", "regression_pred"),
    ]
    results = []
    for cls_name, options, true_name, pred_name in plan:
        for weighted in (False, True):
            metric = getattr(metrics, cls_name)(**options)
            for batch in batches:
                weight = batch["sample_weight"] if weighted else None
                metric.update_state(batch[true_name], batch[pred_name], sample_weight=weight)
            case = {"metric": cls_name, "options": options, "y_true": true_name, "y_pred": pred_name}
            results.append({**case, "weighted": weighted, "result": metric.result()})

    keras.backend.clear_session()  # the metrics' default names are numbered per session (auc, auc_1...)
    x = rng.normal(0, 1, (24, 5)).astype(np.float32)
    y = np.eye(k, dtype=np.float32)[rng.integers(0, k, 24)]
    kernel = rng.normal(0, 0.5, (5, k)).astype(np.float32)
    model = keras.Sequential([keras.layers.Dense(k, activation="softmax", input_shape=(5,))])
    model.set_weights([kernel, np.zeros(k, np.float32)])
    compiled = [  # a class and its arguments, or a name as compile takes it
        ("AUC", {}),
        ("AUC", {"curve": "PR"}),
        ("Precision", {}),
        ("Recall", {"top_k": 1}),
        ("top_k_categorical_accuracy", None),
        ("TopKCategoricalAccuracy", {"k": 2, "name": "top2"}),
    ]
    given = [name if options is None else getattr(metrics, name)(**options) for name, options in compiled]
    model.compile(keras.optimizers.legacy.SGD(0.1), "categorical_crossentropy", metrics=given)
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    evaluation = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    fit = {"x": x, "y": y, "kernel": kernel, "compiled": compiled, "history": history.history, "evaluate": evaluation}
    write("metrics_breadth", shortest({"batches": batches, "results": results, "fit": fit}))


def batching_behaviours(rng) -> None:
    """keras/engine/data_adapter.py (TensorLikeDataAdapter, DatasetAdapter) and training.py: arrays with
    steps and no batch_size are cut into batches of ceil(n / steps); validation takes validation_batch_size or
    the batch_size given (else 32), not the training batches' size; a batch_size given with a Dataset is
    ignored. Seen through the weights SGD leaves (they depend on how the samples were batched) and the
    losses. keras/layers/core/dropout.py: Dropout(1.0) is taken, and refused in training by tf.nn.dropout."""
    x = rng.normal(0, 1, (10, 3)).astype(np.float32)
    y = rng.normal(0, 1, (10, 2)).astype(np.float32)
    val_x = rng.normal(0, 1, (40, 3)).astype(np.float32)
    val_y = rng.normal(0, 1, (40, 2)).astype(np.float32)
    kernel = rng.normal(0, 0.5, (3, 2)).astype(np.float32)

    def model():
        made = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
        made.set_weights([kernel, np.zeros(2, np.float32)])
        made.compile(keras.optimizers.legacy.SGD(0.1), "mse")
        return made

    runs = []
    for arguments in [  # "dataset": a Dataset of (x, y) in batches of that size; "validation": (val_x, val_y)
        {"steps_per_epoch": 3},
        {"steps_per_epoch": 6},
        {"steps_per_epoch": 3, "batch_size": 2},
        {"steps_per_epoch": 4, "validation": True, "validation_steps": 1},
        {"dataset": 4, "batch_size": 3},
    ]:
        fitted, given = model(), dict(arguments)
        if given.pop("validation", False):
            given["validation_data"] = (val_x, val_y)
        if "dataset" in given:
            data = {"x": tf.data.Dataset.from_tensor_slices((x, y)).batch(given.pop("dataset"))}
        else:
            data = {"x": x, "y": y}
        history = fitted.fit(**data, **given, epochs=2, shuffle=False, verbose=0)
        runs.append(
            {
                "arguments": arguments,
                "weights": fitted.get_weights(),
                "history": history.history,
                "iterations": fitted.optimizer.iterations,
                "evaluate_steps_1": fitted.evaluate(val_x, val_y, steps=1, verbose=0),
            }
        )
    dropout = keras.layers.Dropout(1.0)
    try:
        dropout(x, training=True)
        training_error = None
    except ValueError as error:
        training_error = next(line for line in str(error).splitlines() if "`rate`" in line)
    write(
        "batching_behaviours",
        shortest(
            {
                "x": x,
                "y": y,
                "val_x": val_x,
                "val_y": val_y,
                "kernel": kernel,
                "runs": runs,
                "dropout_1": {"inference": dropout(x, training=False), "training_error": training_error},
            }
        ),
    )


APPLICATIONS = (
    # (id, model function, keyword arguments, seed of the weights and input whose output is recorded, or None)
    ("resnet50", "ResNet50", {}, None),
    ("resnet50_notop_max_64", "ResNet50", {"include_top": False, "pooling": "max", "input_shape": (64, 64, 3)}, None),
    ("resnet50_32_logits", "ResNet50", {"input_shape": (32, 32, 3), "classes": 10, "classifier_activation": None}, 1),
    ("mobilenetv2", "MobileNetV2", {}, None),
    (
        "mobilenetv2_140_96_avg",
        "MobileNetV2",
        {"alpha": 1.4, "include_top": False, "pooling": "avg", "input_shape": (96, 96, 3)},
        None,
    ),
    (
        "mobilenetv2_035_32_logits",
        "MobileNetV2",
        {"alpha": 0.35, "input_shape": (32, 32, 3), "classes": 10, "classifier_activation": None},
        2,
    ),
)


def applications(rng) -> None:
    """tf-keras applications/resnet.py (ResNet50) and applications/mobilenet_v2.py (MobileNetV2), weights=None:
    every layer's name, class, output shape and parameter count and the model's name; for the small-image cases
    the weights' names and shapes in order, and the inference output of two seeded images from seeded weights;
    imagenet_utils.preprocess_input in its three modes."""
    cases = []
    for case_id, function, arguments, seed in APPLICATIONS:
        keras.backend.clear_session()
        model = getattr(keras.applications, function)(weights=None, **arguments)
        case = {
            "id": case_id,
            "function": function,
            "arguments": arguments,
            "name": model.name,
            "layers": [
                [layer.name, type(layer).__name__, list(layer.output_shape), layer.count_params()]
                for layer in model.layers
            ],
        }
        if seed is not None:
            case["weights"] = [[w.name, list(w.shape)] for w in model.weights]
            model.set_weights(_golden_models().application_weights(case["weights"], seed))
            x = np.random.default_rng(seed).uniform(-1, 1, (2,) + arguments["input_shape"]).astype(np.float32)
            case.update(seed=seed, output=model(x, training=False))
        cases.append(case)
    pixels = rng.integers(0, 256, (2, 2, 2, 3)).astype(np.uint8)
    preprocessed = {
        mode: keras.applications.imagenet_utils.preprocess_input(pixels.copy(), mode=mode)
        for mode in ("caffe", "tf", "torch")
    }
    write("applications", shortest({"cases": cases, "pixels": pixels, "preprocessed": preprocessed}))


ATTENTION_CASES = [  # (id, MultiHeadAttention arguments, query, value and key shapes (key None: the value), masked)
    ("self-attention, masked, with scores", {"num_heads": 2, "key_dim": 3}, (2, 4, 6), (2, 4, 6), None, True),
    (
        "cross-attention with a key",
        {"num_heads": 2, "key_dim": 2, "value_dim": 3},
        (2, 3, 4),
        (2, 5, 6),
        (2, 5, 5),
        False,
    ),
    (
        "no bias, output_shape",
        {"num_heads": 3, "key_dim": 2, "use_bias": False, "output_shape": 5},
        (1, 3, 4),
        (1, 3, 4),
        None,
        True,
    ),
]
BERT_BASE = {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072, "sequence": 128}


def _examples():
    """ipu_teach/examples.py loaded on its own (its builders take the keras to use; nothing of ipu-teach runs)."""
    import importlib.util  # noqa: PLC0415

    path = OUT.parent.parent.parent / "ipu_teach" / "examples.py"
    spec = importlib.util.spec_from_file_location("ipu_teach_examples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def attention(rng) -> None:
    """tf-keras layers/attention/multi_head_attention.py (EinsumDense projections, the dot-product and
    combine einsums, the masked softmax, return_attention_scores), layers/core/einsum_dense.py and
    activations.gelu (exact and approximate): outputs and the gradients of sum(upstream * output) with respect
    to the inputs and every weight, from seeded weights; and the parameter count and weight shapes of the
    BERT-base encoder of ipu_teach/examples.py built with tf-keras."""
    cases = []
    for case_id, arguments, q_shape, v_shape, k_shape, masked in ATTENTION_CASES:
        layer = keras.layers.MultiHeadAttention(**arguments)
        query, value = (tf.constant(rng.normal(0, 1, s).astype(np.float32)) for s in (q_shape, v_shape))
        key = None if k_shape is None else tf.constant(rng.normal(0, 1, k_shape).astype(np.float32))
        mask = (rng.uniform(size=(q_shape[0], q_shape[1], v_shape[1])) > 0.3) if masked else None
        layer(query, value, key=key, attention_mask=mask)
        weights = seeded_weights(layer, rng)
        with tf.GradientTape() as tape:
            tape.watch([query, value] + ([] if key is None else [key]))
            output, scores = layer(query, value, key=key, attention_mask=mask, return_attention_scores=True)
            upstream = rng.uniform(0.5, 1.5, output.shape).astype(np.float32)
            total = tf.reduce_sum(output * upstream)
        watched = [query, value] + ([] if key is None else [key])
        gradients = tape.gradient(total, watched + layer.trainable_weights)
        cases.append(
            {
                "id": case_id,
                "arguments": arguments,
                "query": query,
                "value": value,
                "key": key,
                "mask": None if mask is None else mask.astype(np.int32),
                "weight_names": [w.name for w in layer.weights],
                "weights": weights,
                "upstream": upstream,
                "output": output,
                "scores": scores,
                "input_gradients": gradients[: len(watched)],
                "weight_gradients": gradients[len(watched) :],
            }
        )
    x = rng.normal(0, 2, (3, 5)).astype(np.float32)
    gelu = {str(a): keras.activations.gelu(tf.constant(x), approximate=a) for a in (False, True)}
    dense = keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    dense_x = rng.normal(0, 1, (2, 4, 5)).astype(np.float32)
    dense(dense_x)
    dense_weights = seeded_weights(dense, rng)
    bert = _examples().bert_encoder(keras, **BERT_BASE)
    write(
        "attention",
        shortest(
            {
                "cases": cases,
                "gelu": {"x": x, **gelu},
                "einsum_dense": {"x": dense_x, "weights": dense_weights, "output": dense(dense_x)},
                "bert_base": {
                    "arguments": BERT_BASE,
                    "count_params": bert.count_params(),
                    "weight_shapes": [list(w.shape) for w in bert.weights],
                    "output_shape": list(bert.output_shape),
                },
            }
        ),
    )


GROUP_NORMALIZATION_CASES = [
    ("two groups, 4D", {"groups": 2}, (2, 3, 3, 4)),
    ("one group, 3D", {"groups": 1}, (2, 5, 6)),
    ("instance, 2D", {"groups": 6, "epsilon": 0.01}, (3, 6)),
    ("no scale or center", {"groups": 3, "center": False, "scale": False}, (2, 2, 2, 6)),
]


def group_normalization(rng) -> None:
    """tf-keras ``layers/normalization/group_normalization.py``: outputs and the gradients of sum(upstream *
    output) with respect to the input and gamma and beta, from seeded weights. Graphcore's IPU layer groups
    the channels with a stride (channel c in group c % groups: ``strided_channel_grouping``, graphcore/tensorflow
    ``popnn_normalization_test.py``): its cases are Keras' layer on the channels reordered so that each strided
    group is contiguous, the results put back in the original channel order."""
    cases = []
    for strided in (False, True):
        for case_id, arguments, shape in GROUP_NORMALIZATION_CASES:
            channels, groups = shape[-1], arguments["groups"]
            order = [c for g in range(groups) for c in range(g, channels, groups)] if strided else list(range(channels))
            back = np.argsort(order)
            layer = keras.layers.GroupNormalization(**arguments)
            x = rng.normal(1.0, 2.0, shape).astype(np.float32)
            layer.build(shape)
            weights = [rng.normal(0, 0.5, w.shape).astype(np.float32) for w in layer.weights]
            layer.set_weights([w[order] for w in weights])
            y, upstream, gradients = output_and_gradients(layer, tf.constant(x[..., order]), rng, watch_input=True)
            cases.append(
                {
                    "id": f"{case_id}{', strided' if strided else ''}",
                    "strided": strided,
                    "arguments": arguments,
                    "x": x,
                    "weights": weights,
                    "upstream": upstream[..., back],
                    "output": y.numpy()[..., back],
                    "input_gradient": gradients[0].numpy()[..., back],
                    "weight_gradients": [g.numpy()[back] for g in gradients[1:]],
                }
            )
    write("group_normalization", shortest({"cases": cases}))


SECTIONS = (
    losses,
    metrics,
    normalization,
    configs,
    subclassed,
    layers_breadth,
    regularizers,
    masking,
    optimizers_breadth,
    losses_breadth,
    metrics_breadth,
    batching_behaviours,
    applications,
    attention,
    group_normalization,
)


def main() -> None:
    """Every section, or only those named on the command line (``make_keras_goldens.py optimizers_breadth``)."""
    keras.utils.set_random_seed(0)
    chosen = [s for s in SECTIONS if s.__name__ in sys.argv[1:]] if sys.argv[1:] else SECTIONS
    for section in chosen:
        section(np.random.default_rng(sum(map(ord, section.__name__))))
    total = sum(p.stat().st_size for p in OUT.glob("*.json"))
    print(f"{total} bytes in all")
    if total > 500_000:
        sys.exit("the fixtures are larger than 500 KB: make the inputs smaller")


if __name__ == "__main__":
    main()
