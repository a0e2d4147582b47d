"""AUC, Precision, Recall, the top-k accuracies and MeanIoU beyond their values (compared with tf-keras in
test_keras_goldens_training.py): Keras' default names, the checks and their messages, and their state."""

import contextlib

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_dense_model

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import configure_ipus


def test_default_names_are_numbered_per_session_as_keras():
    keras.backend.clear_session()
    names = [keras.metrics.AUC().name, keras.metrics.AUC().name, keras.metrics.Recall().name]
    names += [keras.metrics.Precision().name, keras.metrics.MeanIoU(3).name, keras.metrics.AUC().name]
    assert names == ["auc", "auc_1", "recall", "precision", "mean_io_u", "auc_2"]
    assert keras.metrics.get("AUC").name == "auc"  # as compile names it (in a graph of its own, in Keras)
    assert keras.metrics.TopKCategoricalAccuracy().name == "top_k_categorical_accuracy"
    keras.backend.clear_session()
    assert keras.metrics.AUC().name == "auc"


@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: keras.metrics.AUC(curve="ROCK"),
            r'Invalid AUC curve value: "ROCK"\. Expected values are \["PR", "ROC"\]',
        ),
        (
            lambda: keras.metrics.AUC(summation_method="trapezoid"),
            r'Invalid AUC summation method value: "trapezoid"\. Expected values are \["interpolation", "majoring"',
        ),
        (lambda: keras.metrics.AUC(num_thresholds=1), r"Argument `num_thresholds` must be an integer > 1\. Received: "),
        (lambda: keras.metrics.AUC(num_labels=3), r"`num_labels` is needed only when `multi_label` is True\."),
        (lambda: keras.metrics.AUC(label_weights=[1, -1]), r"All values of `label_weights` must be non-negative\."),
        (
            lambda: keras.metrics.Precision(thresholds=[0.5, 1.5]),
            r"Threshold values must be in \[0, 1\]\. Received: \[1\.5\]",
        ),
        (lambda: keras.metrics.get("auroc"), r"Unknown metric .auroc.\. Choose one of .*AUC, .*Precision, Recall, "),
    ],
    ids=["curve", "summation", "num_thresholds", "num_labels", "label_weights", "thresholds", "unknown name"],
)
def test_bad_arguments_are_refused_with_keras_wording(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize("metric", [keras.metrics.AUC(), keras.metrics.Precision(), keras.metrics.Recall()])
def test_predictions_outside_zero_one_are_refused_as_keras_2_6_does(metric):
    """Keras 2.6's update_confusion_matrix_variables asserts 'predictions must be >= 0' and '<= 1'."""
    with pytest.raises(ValueError, match=r"predictions must be <= 1, got 1\.5 .*sigmoid or softmax"):
        metric.update_state(np.array([1.0, 0.0]), np.array([1.5, 0.2]))
    with pytest.raises(ValueError, match=r"predictions must be >= 0, got -0\.5"):
        metric.update_state(np.array([1.0, 0.0]), np.array([0.5, -0.5]))
    assert float(np.max(metric.true_positives)) == 0  # nothing counted


def test_auc_from_logits_takes_the_sigmoid_first():
    logits = np.array([2.0, -1.0, 0.5, -3.0], np.float32)
    labels = np.array([1.0, 0.0, 0.0, 1.0], np.float32)
    on_logits, on_probabilities = keras.metrics.AUC(from_logits=True), keras.metrics.AUC()
    on_logits.update_state(labels, logits)
    on_probabilities.update_state(labels, 1 / (1 + np.exp(-logits)))
    assert on_logits.result() == on_probabilities.result() == pytest.approx(0.5)


def test_precision_with_several_thresholds_gives_one_value_each():
    precision = keras.metrics.Precision(thresholds=[0.2, 0.6])
    result = precision(np.array([1.0, 0.0, 1.0]), np.array([0.7, 0.4, 0.3]))
    np.testing.assert_allclose(result, [2 / 3, 1.0])
    assert precision.thresholds == [0.2, 0.6]


def test_mean_iou_refuses_ids_outside_its_classes():
    with pytest.raises(
        ValueError, match=r"MeanIoU: predictions must be class ids in \[0, 3\), got values from 0 to 4 "
    ):
        keras.metrics.MeanIoU(3).update_state([0, 1], [0, 4])


def test_top_k_counts_ties_at_the_kth_place_as_in_the_top_k():
    """tf.math.in_top_k: classes tied at the boundary are all in the top k."""
    accuracy = keras.metrics.SparseTopKCategoricalAccuracy(k=1)
    accuracy.update_state(np.array([[1], [2]]), np.array([[0.4, 0.4, 0.2], [0.5, 0.3, 0.2]], np.float32))
    assert accuracy.result() == 0.5


@pytest.mark.parametrize("device", ["cpu", "ipu"])
def test_metrics_by_string_in_compile_report_keras_names(device):
    """compile(metrics=["AUC", "Precision", "sparse_top_k_categorical_accuracy"]) in a fresh session: logged
    as auc, precision and sparse_top_k_categorical_accuracy, on the CPU and on the simulated IPU alike."""
    x, y = tiny_classification(n=32)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    configure_ipus(1)
    strategy = ipu.ipu_strategy.IPUStrategy() if device == "ipu" else None
    with strategy.scope() if strategy else contextlib.nullcontext():
        model = tiny_dense_model()
        model.compile("adam", "sparse_categorical_crossentropy", metrics=["sparse_top_k_categorical_accuracy"])
    history = model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert list(history.history) == ["loss", "sparse_top_k_categorical_accuracy"]
    assert history.history["sparse_top_k_categorical_accuracy"] == [1.0]  # 3 classes, k = 5
    y_one_hot = keras.utils.to_categorical(y, 3)
    with strategy.scope() if strategy else contextlib.nullcontext():
        model.compile("adam", "categorical_crossentropy", metrics=["AUC", "Precision"], steps_per_execution=1)
    logs = model.evaluate(x, y_one_hot, batch_size=8, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "auc", "precision"]
    auc = keras.metrics.AUC(name="check")
    auc.update_state(y_one_hot, model.predict(x, verbose=0))
    assert logs["auc"] == pytest.approx(auc.result(), rel=1e-6)


def test_a_metric_with_several_thresholds_shows_each_result():
    precision = keras.metrics.Precision(thresholds=[0.2, 0.6], name="p")
    precision.update_state(np.array([1.0, 0.0, 1.0]), np.array([0.7, 0.4, 0.3]))
    assert repr(precision) == "<Precision name=p result=[0.6667 1.    ]>"
    assert repr(keras.metrics.AUC(name="a")) == "<AUC name=a result=0.0000>"


def test_loss_like_metrics_by_name_log_keras_names():
    """A function's name is logged as given ("mape", "kld"); a class named by a string under its default name
    (KLDivergence: kullback_leibler_divergence, LogCoshError: logcosh), as Keras' compile does."""
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(16, 4)).astype(np.float32), rng.uniform(0.5, 1.5, (16, 3)).astype(np.float32)
    keras.backend.clear_session()
    model = keras.Sequential([keras.layers.Dense(3, activation="softplus", input_shape=(4,))])
    names = ["mape", "kld", "msle", "RootMeanSquaredError", "KLDivergence", "LogCoshError", "cosine_similarity"]
    model.compile("sgd", "mse", metrics=names)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    assert list(logs) == ["loss", "mape", "kld", "msle", "root_mean_squared_error"] + [
        "kullback_leibler_divergence",
        "logcosh",
        "cosine_similarity",
    ]
    assert logs["root_mean_squared_error"] == pytest.approx(np.sqrt(logs["loss"]), rel=1e-5)
    assert logs["kld"] == pytest.approx(logs["kullback_leibler_divergence"], rel=1e-6)
