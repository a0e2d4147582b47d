"""ipu-teach's optimizers, learning-rate schedules, losses and metrics against real Keras 2 (tf-keras with
Keras 2.6's optimizers, ``keras.optimizers.legacy``), from the same weights, gradients and inputs.

The fixtures ``golden/optimizers_breadth.json`` and ``golden/losses_metrics_breadth.json`` are written by
``tools/make_keras_goldens.py`` in a separate environment with TensorFlow and tf-keras; these tests need neither.
"""

import re
import warnings

import numpy as np
import pytest
from test_keras_goldens import _object_id, golden

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach.autograd import Tensor, ops
from ipu_teach.data.dataset import Dataset

OPTIMIZERS = golden("optimizers_breadth")


class Warmup(keras.optimizers.schedules.LearningRateSchedule):
    """The LearningRateSchedule subclass the fixture's script writes with TensorFlow ops, in numpy."""

    def __call__(self, step):
        step = np.float32(step) + np.float32(1)
        return np.float32(0.1) * min(step / np.float32(5), np.float32(1) / np.sqrt(step / np.float32(5)))

    def get_config(self):
        return {}


def _schedule(name):
    if name == "Warmup":
        return Warmup()
    cls = getattr(keras.optimizers.schedules, name.partition("(")[0])
    return cls(**OPTIMIZERS["schedules"][name]["config"])


def _run_id(run):
    options = ", ".join(
        f"{k}={v['schedule'] if isinstance(v, dict) else v}" for k, v in run["options"].items() if k != "name"
    )
    return f"{run['optimizer']}({options})"


def _optimizer(run):
    options = dict(run["options"])
    if isinstance(options.get("learning_rate"), dict):
        options["learning_rate"] = _schedule(options["learning_rate"]["schedule"])
    return getattr(keras.optimizers, run["optimizer"])(**options)


@pytest.mark.parametrize("run", OPTIMIZERS["runs"], ids=_run_id)
def test_optimizer_trajectories_match_keras(run):
    """20 ``apply_gradients`` steps from the same weights and gradients, compared at steps 1, 2, 5 and 20:
    the update rules, the clipping, ``decay`` and the schedules as Keras 2.6 applies them."""
    optimizer = _optimizer(run)
    variables = {name: tf.Variable(np.asarray(w, np.float32)) for name, w in OPTIMIZERS["weights"].items()}
    for step, gradients in enumerate(OPTIMIZERS["gradients"], start=1):
        optimizer.apply_gradients([(np.asarray(gradients[n], np.float32), v) for n, v in variables.items()])
        if str(step) in run["trajectory"]:
            for name, variable in variables.items():
                np.testing.assert_allclose(
                    variable.numpy(), run["trajectory"][str(step)][name], rtol=1e-5, atol=1e-6, err_msg=f"step {step}"
                )
    assert optimizer.iterations == 20


@pytest.mark.parametrize("run", OPTIMIZERS["runs"], ids=_run_id)
def test_optimizer_configs_match_keras(run):
    """``get_config`` as Keras' legacy optimizers write it (``decay`` always, the clipping options given, a
    schedule by class name and configuration); ``from_config`` makes an optimizer with the same one."""
    optimizer = _optimizer(run)
    config, expected = optimizer.get_config(), dict(run["config"])
    if isinstance(expected["learning_rate"], dict):  # tf-keras 2.21 adds "module" and "registered_name"
        expected["learning_rate"] = {key: expected["learning_rate"][key] for key in ("class_name", "config")}
        if expected["learning_rate"]["class_name"] == "_Warmup":
            expected["learning_rate"]["class_name"] = "Warmup"
    assert config == expected
    rebuilt = type(optimizer).from_config(config, custom_objects={"Warmup": Warmup})
    assert rebuilt.get_config() == config


@pytest.mark.parametrize("name", list(OPTIMIZERS["default_configs"]))
def test_optimizer_defaults_match_keras(name):
    assert getattr(keras.optimizers, name)().get_config() == OPTIMIZERS["default_configs"][name]
    assert keras.optimizers.get(name.lower()).get_config() == OPTIMIZERS["default_configs"][name]


@pytest.mark.parametrize("name", list(OPTIMIZERS["schedules"]))
def test_learning_rate_schedules_match_keras(name):
    """Each schedule's learning rate at steps 0 to 24, float32 to the last bit or nearly."""
    schedule = _schedule(name)
    values = [float(schedule(step)) for step in range(25)]
    np.testing.assert_allclose(values, OPTIMIZERS["schedules"][name]["values"], rtol=2e-7)


LOSSES = golden("losses_breadth")


def _loss_case_id(case):
    options = "".join(f", {k}={v}" for k, v in case["options"].items())
    return f"{case['loss']}({case['labels']}, {case['y_pred']}{options})"


@pytest.mark.parametrize("case", LOSSES["cases"], ids=_loss_case_id)
def test_more_loss_functions_give_keras_values_and_gradients(case):
    """Each loss function's per-sample values and TensorFlow's gradient of their weighted sum, including
    where the formula switches (Huber at |e| = delta, a hinge margin of 0, tied maxima, clipped values)."""
    y_true = np.asarray(LOSSES["labels"][case["labels"]], np.float32)
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32), requires_grad=True)
    per_sample = getattr(keras.losses, case["loss"])(y_true, y_pred, **case["options"])
    np.testing.assert_allclose(per_sample.data, case["per_sample"], rtol=2e-6, atol=1e-6)
    upstream = np.asarray(LOSSES["upstream"], np.float32)[: per_sample.shape[0]]
    per_sample.backward(upstream)
    np.testing.assert_allclose(y_pred.grad, case["gradient"], rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("case", LOSSES["objects"], ids=_object_id)
def test_more_loss_objects_reduce_weigh_and_smooth_as_keras(case):
    """The classes with sample weights and each reduction (values and gradients); Keras' default names."""
    loss = getattr(keras.losses, case["class"])(reduction=case["reduction"], **case["options"])
    y_true = np.asarray(LOSSES["labels"][case["labels"]], np.float32)
    y_pred = Tensor(np.asarray(LOSSES["inputs"][case["y_pred"]], np.float32), requires_grad=True)
    value = loss(y_true, y_pred, sample_weight=np.asarray(LOSSES["sample_weight"], np.float32))
    np.testing.assert_allclose(value.data, case["value"], rtol=2e-6, atol=1e-6)
    ops.reduce_sum(value).backward()
    np.testing.assert_allclose(y_pred.grad, case["gradient_of_sum"], rtol=2e-5, atol=1e-6)
    assert loss.name == case["name"]


METRICS = golden("metrics_breadth")


def _metric_case_id(case):
    options = ", ".join(f"{k}={v}" for k, v in case["options"].items())
    return f"{case['metric']}({options}){' weighted' if case['weighted'] else ''}"


@pytest.mark.parametrize("case", METRICS["results"], ids=_metric_case_id)
def test_confusion_and_top_k_metrics_match_keras(case):
    """Two update_state calls (with or without sample weights), then result(): predictions exactly on a
    threshold, ties, top_k, class_id, several thresholds (one result each), multi_label and label weights."""
    metric = getattr(keras.metrics, case["metric"])(**case["options"])
    for batch in METRICS["batches"]:
        weight = np.asarray(batch["sample_weight"], np.float32) if case["weighted"] else None
        metric.update_state(
            np.asarray(batch[case["y_true"]], np.float32), np.asarray(batch[case["y_pred"]], np.float32), weight
        )
    np.testing.assert_allclose(metric.result(), case["result"], rtol=2e-6, atol=1e-7)
    metric.reset_state()
    assert np.all(np.asarray(metric.result()) == 0)


def test_metrics_in_compile_report_keras_names_and_values():
    """compile(metrics=[AUC(), AUC(curve="PR"), Precision(), Recall(top_k=1), "top_k_categorical_accuracy",
    TopKCategoricalAccuracy(k=2, name="top2")]) (the fixture's "compiled"): fit's history and evaluate's logs
    under Keras' names (auc, auc_1...: numbered per session) with Keras' values."""
    fit = METRICS["fit"]
    keras.backend.clear_session()
    metrics = keras.metrics
    model = keras.Sequential([keras.layers.Dense(4, activation="softmax", input_shape=(5,))])
    model.set_weights([np.asarray(fit["kernel"], np.float32), np.zeros(4, np.float32)])
    compiled = [name if options is None else getattr(metrics, name)(**options) for name, options in fit["compiled"]]
    model.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy", metrics=compiled)
    x, y = np.asarray(fit["x"], np.float32), np.asarray(fit["y"], np.float32)
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert list(history.history) == list(fit["history"])
    for name, values in fit["history"].items():
        np.testing.assert_allclose(history.history[name], values, rtol=2e-5, err_msg=name)
    evaluation = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    assert list(evaluation) == list(fit["evaluate"])
    np.testing.assert_allclose(list(evaluation.values()), list(fit["evaluate"].values()), rtol=2e-5)


BATCHING = golden("batching_behaviours")


@pytest.mark.parametrize("run", BATCHING["runs"], ids=lambda run: str(run["arguments"]))
def test_batching_follows_keras_2_6(run):
    """Arrays with steps_per_epoch and no batch_size: ceil(n / steps) samples per batch; with steps_per_epoch,
    epochs cut one stream of ``epochs`` passes (an epoch may run into the next pass; the data runs out with
    the passes); validation and evaluate(steps=...) batch on their own (validation_batch_size or the
    batch_size given, else ceil(n / steps) or 32); a batch_size beside a Dataset is ignored. Two SGD epochs
    leave Keras' weights and losses only if every batch held the same samples as in Keras."""
    data = {key: np.asarray(BATCHING[key], np.float32) for key in ("x", "y", "val_x", "val_y", "kernel")}
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.set_weights([data["kernel"], np.zeros(2, np.float32)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    arguments = dict(run["arguments"])
    if arguments.pop("validation", False):
        arguments["validation_data"] = (data["val_x"], data["val_y"])
    if "dataset" in arguments:
        inputs = {"x": Dataset.from_tensor_slices((data["x"], data["y"])).batch(arguments.pop("dataset"))}
    else:
        inputs = {"x": data["x"], "y": data["y"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = model.fit(**inputs, **arguments, epochs=2, shuffle=False, verbose=0)
    ran_out = run["iterations"] < 2 * arguments.get("steps_per_epoch", 0)
    assert any("ran out of data" in str(w.message) for w in caught) == ran_out
    assert model.optimizer.iterations == run["iterations"]
    for weight, expected in zip(model.get_weights(), run["weights"]):
        np.testing.assert_allclose(weight, expected, rtol=1e-5, atol=1e-6)
    assert list(history.history) == list(run["history"])
    for key, values in run["history"].items():
        np.testing.assert_allclose(history.history[key], values, rtol=1e-5, err_msg=key)
    evaluation = model.evaluate(data["val_x"], data["val_y"], steps=1, verbose=0)
    np.testing.assert_allclose(evaluation, run["evaluate_steps_1"], rtol=1e-5)


def test_dropout_of_rate_one_is_taken_and_refused_in_training_as_keras():
    x = np.asarray(BATCHING["x"], np.float32)
    layer = keras.layers.Dropout(1.0)
    np.testing.assert_array_equal(layer(x).data, np.asarray(BATCHING["dropout_1"]["inference"], np.float32))
    with pytest.raises(ValueError, match=re.escape(BATCHING["dropout_1"]["training_error"])):
        layer(x, training=True)
    with pytest.raises(ValueError, match=r"Invalid value 1\.5 received for `rate`, expected a value between 0 and 1\."):
        keras.layers.Dropout(1.5)
