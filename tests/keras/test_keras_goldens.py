"""ipu-teach against real Keras (tf-keras), from the same inputs and weights.

The fixtures in ``golden/`` were written by ``tools/make_keras_goldens.py`` in a separate environment
with TensorFlow and tf-keras (see that script for how to make them again); these tests need neither.
"""

import contextlib
import json
import pathlib

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.autograd import Tensor

GOLDEN = pathlib.Path(__file__).parent / "golden"


def golden(name) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


LOSSES = golden("losses")


def _case_id(case):
    logits = "" if case["from_logits"] is None else f", from_logits={case['from_logits']}"
    return f"{case['loss']}({case['labels']}, {case['y_pred']}{logits})"


@pytest.mark.parametrize("case", LOSSES["cases"], ids=_case_id)
def test_loss_functions_give_keras_values_and_gradients(case):
    """Keras' backend formulas (clip, log, normalise...) and TensorFlow's gradients of them, on
    probabilities, on values that are not probabilities (a ReLU's outputs) and on logits."""
    y_true = np.asarray(LOSSES["labels"][case["labels"]])
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32), requires_grad=True)
    function = getattr(keras.losses, case["loss"])
    kwargs = {} if case["from_logits"] is None else {"from_logits": case["from_logits"]}
    per_sample = function(y_true, y_pred, **kwargs)
    np.testing.assert_allclose(per_sample.data, case["per_sample"], rtol=2e-5, atol=1e-6)
    per_sample.backward(np.asarray(LOSSES["upstream"], np.float32))
    np.testing.assert_allclose(y_pred.grad, case["gradient"], rtol=2e-4, atol=1e-6)


def _object_id(case):
    options = "".join(f", {k}={v}" for k, v in case["options"].items())
    return f"{case['class']}({case['reduction']}{options})"


@pytest.mark.parametrize("case", LOSSES["objects"], ids=_object_id)
def test_loss_objects_weigh_samples_smooth_labels_and_reduce_as_keras(case):
    loss = getattr(keras.losses, case["class"])(reduction=case["reduction"], **case["options"])
    y_true = np.asarray(LOSSES["labels"][case["labels"]])
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32))
    value = loss(y_true, y_pred, sample_weight=np.asarray(LOSSES["sample_weight"]))
    np.testing.assert_allclose(value.data, case["value"], rtol=2e-5, atol=1e-6)


METRICS = golden("metrics")


@pytest.mark.parametrize("case", METRICS["results"], ids=lambda c: f"{c['metric']}(sample_weight {c['weights']})")
def test_metrics_weigh_samples_as_keras(case):
    """Two ``update_state`` calls, with no weights, one weight per sample, or weights of shape (n, 1)."""
    metric = getattr(keras.metrics, case["metric"])()
    for batch in METRICS["batches"]:
        weight = None if case["weights"] == "none" else np.asarray(batch["sample_weight"])
        if case["weights"] == "(n, 1)":
            weight = weight[:, None]
        values = [np.asarray(batch[case["y_true"]])] + ([np.asarray(batch[case["y_pred"]])] if case["y_pred"] else [])
        metric.update_state(*values, sample_weight=weight)
    np.testing.assert_allclose(metric.result(), case["result"], rtol=1e-5)


def _fit_runs():
    runs = [pytest.param(run, "cpu", id=f"fit with {run['given']}") for run in METRICS["fit"]["runs"]]
    return runs + [pytest.param(METRICS["fit"]["runs"][0], "ipu", id="fit with sample_weight on the simulated IPU")]


@pytest.mark.parametrize(("run", "device"), _fit_runs())
def test_weighted_metrics_take_fits_sample_and_class_weights_as_keras(run, device):
    """``compile(metrics=..., weighted_metrics=...)``: Keras' names and order, the weighted ones weighed by
    ``fit``'s ``sample_weight`` or ``class_weight`` and by ``evaluate``'s ``sample_weight``, the others not."""
    data = METRICS["fit"]
    x, y = np.asarray(data["x"], np.float32), np.asarray(data["y"])
    scope = contextlib.nullcontext()
    if device == "ipu":
        config = ipu.config.IPUConfig()
        config.auto_select_ipus = 1
        config.configure_ipu_system()
        scope = ipu.ipu_strategy.IPUStrategy().scope()
    with scope:
        model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(4,))])
        model.set_weights([np.asarray(data["kernel"]), np.asarray(data["bias"])])
        metrics = ["accuracy", "sparse_categorical_crossentropy"]
        model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy", metrics, weighted_metrics=metrics)
    assert (model.device_executor is not None) == (device == "ipu")
    given = {
        "sample_weight": {"sample_weight": np.asarray(data["sample_weight"])},
        "class_weight": {"class_weight": {int(k): v for k, v in data["class_weight"].items()}},
    }.get(run["given"], {})
    history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0, **given)
    assert model.metrics_names == run["metrics_names"]
    assert list(history.history) == list(run["history"])
    for name, values in run["history"].items():
        np.testing.assert_allclose(history.history[name], values, rtol=1e-5, err_msg=name)
    evaluation = model.evaluate(
        x, y, batch_size=4, sample_weight=np.asarray(data["sample_weight"]), verbose=0, return_dict=True
    )
    for name, value in run["evaluate_with_sample_weight"].items():
        np.testing.assert_allclose(evaluation[name], value, rtol=1e-5, err_msg=name)


CONFIGS = golden("configs")


def test_add_weight_defaults_to_glorot_uniform_and_a_variable_name_as_keras():
    """A custom layer's ``add_weight(shape=...)``: no name needed, glorot_uniform values (not zeros) for a
    float weight, zeros for an integer one."""
    keras_weight = CONFIGS["add_weight"]
    layer = keras.layers.Layer(name="custom")
    weight = layer.add_weight(shape=(200, 100))
    assert weight.name == "custom/" + keras_weight["name"]  # Keras 2.6 names a weight within its layer
    limit = keras_weight["glorot_limit"]
    assert keras_weight["max_abs"] <= limit and 0.95 * limit < np.abs(weight.data).max() <= limit
    assert weight.requires_grad and weight.dtype == np.float32
    np.testing.assert_array_equal(layer.add_weight(shape=(3,), dtype="int32").data, keras_weight["int_weight"])
    with pytest.raises(ValueError, match="An initializer for variable v of type <U0 is required for layer custom"):
        layer.add_weight("v", (2,), dtype="str")


def test_add_weight_takes_keras_positional_order_and_keywords():
    """tf-keras 2.x: ``add_weight(name, shape, dtype, initializer, regularizer, trainable, constraint, ...)``; a
    third positional argument is the dtype (Keras fails on ``"ones"`` there), an unknown keyword is a TypeError."""
    layer = keras.layers.Layer(name="custom")
    weight = layer.add_weight("w", (2,), "float16", "ones", None, False)
    assert weight.dtype == np.float16 and not weight.requires_grad
    np.testing.assert_array_equal(weight.data, [1.0, 1.0])
    assert layer.add_weight("t", (1,), trainable=None).requires_grad  # None means trainable, as Keras
    assert layer.add_weight("s", (1,), use_resource=True, synchronization=None, partitioner=None).shape == (1,)
    with pytest.raises(TypeError, match="Unknown keyword argument"):
        layer.add_weight("u", (1,), shapes=(2,))
    with pytest.raises(TypeError, match="the third positional argument is the dtype.*pass initializer='ones'"):
        layer.add_weight("x", (2,), "ones")  # not an initializer in that place


@pytest.mark.parametrize("option", ["constraint"])  # regularizers: tests/keras/test_regularizers.py
def test_add_weight_refuses_what_it_would_otherwise_ignore(option):
    layer = keras.layers.Layer(name="custom")
    with pytest.raises(
        ValueError, match=rf"add_weight\({option}=...\) is not simulated by ipu-teach yet.*remove {option}="
    ):
        layer.add_weight("w", (2,), **{option: "l2"})


NORMALIZATION = golden("normalization")


@pytest.mark.parametrize("run", NORMALIZATION["batch_normalization"], ids=lambda r: f"input {tuple(r['shape'])}")
def test_batch_normalization_moving_statistics_as_keras(run):
    """Three training calls, then inference: 4-D inputs take Keras' fused path (moving variance with
    Bessel's correction), 2-D and 3-D ones the other (without)."""
    layer = keras.layers.BatchNormalization(momentum=0.8, epsilon=1e-3)
    outputs = [layer(np.asarray(x, np.float32), training=True) for x in run["xs"]]
    assert layer.fused == run["fused"]
    np.testing.assert_allclose(outputs[-1].data, run["last_training_output"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.moving_mean.data, run["moving_mean"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.moving_variance.data, run["moving_variance"], rtol=1e-5)
    inference = layer(np.asarray(run["xs"][0], np.float32), training=False)
    np.testing.assert_allclose(inference.data, run["inference_output"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", list(NORMALIZATION["weights"]))
def test_normalization_layers_have_keras_weights(layer):
    """``center=False`` / ``scale=False`` leave out ``beta`` / ``gamma``, so Keras' weights fit ``set_weights``."""
    class_name, _, arguments = layer.rstrip(")").partition("(")  # e.g. BatchNormalization(center=False)
    options = dict(option.split("=") for option in arguments.split(", ") if option)
    made = getattr(keras.layers, class_name)(**{k: v == "True" for k, v in options.items()})
    made(np.ones((2, 3), np.float32))
    assert [w.name.split("/")[-1].split(":")[0] for w in made.weights] == NORMALIZATION["weights"][layer]


def test_layer_normalization_without_center_takes_keras_weights():
    data = NORMALIZATION["layer_normalization"]
    layer = keras.layers.LayerNormalization(center=False)
    x = np.asarray(data["x"], np.float32)
    layer(x)
    layer.set_weights([np.asarray(data["gamma"], np.float32)])
    np.testing.assert_allclose(layer(x).data, data["center_false_output"], rtol=1e-5, atol=1e-6)


@pytest.fixture(params=["keras alone", "after import ipu_teach.ipu"])
def model_extensions(request):
    """Models built with ``ipu_teach.keras`` alone, or with Graphcore's methods added by ``ipu_teach.ipu``."""
    from ipu_teach.ipu.keras_extensions import ModelExtension
    from ipu_teach.keras.engine import extensions

    if request.param == "keras alone":
        extensions.unregister_model_extension(keras.Model, ModelExtension)
        yield None
        extensions.register_model_extension(keras.Model, ModelExtension)
    else:
        yield ModelExtension


def _two_input_model():
    """The model of tools/make_keras_goldens.py: a layer shared by two branches, a merge."""
    inputs, other = keras.Input((4,), name="features"), keras.Input((2,), name="extra")
    shared = keras.layers.Dense(3, activation="relu", name="shared")
    merged = keras.layers.Concatenate(name="merge")(
        [shared(inputs), shared(keras.layers.Dense(4, name="widen")(other))]
    )
    return keras.Model(
        [inputs, other], keras.layers.Dense(2, activation="softmax", name="head")(merged), name="two_inputs"
    )


def _by_name(layers):
    return {layer["name"]: {k: v for k, v in layer.items() if k in ("class_name", "inbound_nodes")} for layer in layers}


def test_functional_get_config_and_from_config_as_keras(model_extensions):
    """Keras' functional configuration (layers, inbound nodes, input and output layers), through JSON and
    back to a model of the same architecture and parameter count."""
    expected = CONFIGS["functional"]
    model = _two_input_model()
    assert model_extensions is None or isinstance(model, model_extensions)
    config = json.loads(json.dumps(model.get_config()))
    assert config["name"] == expected["config"]["name"]
    assert _by_name(config["layers"]) == _by_name(expected["config"]["layers"])
    assert config["input_layers"] == expected["config"]["input_layers"]
    assert config["output_layers"] == expected["config"]["output_layers"]
    rebuilt = keras.Model.from_config(config)
    assert model.count_params() == rebuilt.count_params() == expected["rebuilt_count_params"]
    assert sorted(layer.name for layer in rebuilt.layers) == sorted(expected["rebuilt_layers"])
    assert rebuilt.get_config() == config
    assert model_extensions is None or isinstance(rebuilt, model_extensions)


def test_sequential_get_config_and_from_config_as_keras(model_extensions):
    expected = CONFIGS["sequential"]
    model = keras.Sequential(
        [keras.layers.Dense(5, activation="relu", input_shape=(3,), name="hidden"), keras.layers.Dense(1, name="out")],
        name="stack",
    )
    config = json.loads(json.dumps(model.get_config()))
    assert config["name"] == "stack"
    classes = [(layer["class_name"], layer["config"]["name"]) for layer in config["layers"]]
    keras_classes = [(layer["class_name"], layer["name"]) for layer in expected["config"]["layers"]]
    assert classes[1:] == keras_classes[1:] and classes[0][0] == keras_classes[0][0] == "InputLayer"
    rebuilt = keras.Sequential.from_config(config)
    assert model.count_params() == rebuilt.count_params() == expected["rebuilt_count_params"]
    assert [layer.name for layer in rebuilt.layers] == expected["rebuilt_layers"]
    assert type(rebuilt).__name__ == "Sequential" and (
        model_extensions is None or isinstance(rebuilt, model_extensions)
    )
