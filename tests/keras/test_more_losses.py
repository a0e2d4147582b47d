"""Keras' other losses in training (their values and gradients are compared with tf-keras in
test_keras_goldens_training.py): by name, function or class in compile, and costed on the simulated IPU."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import configure_ipus

REGRESSION = ["mape", "msle", "huber", "log_cosh", "logcosh", "poisson", "kld", "cosine_similarity"]
CLASSIFICATION = ["hinge", "squared_hinge", "categorical_hinge", "kl_divergence"]


def _problem(name):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, 5)).astype(np.float32)
    if name in CLASSIFICATION:
        y = keras.utils.to_categorical((x[:, 0] > 0).astype(int) + (x[:, 1] > 1).astype(int), 3)
        activation = "softmax" if name == "kl_divergence" else None
    else:
        y = np.abs(x[:, :3] @ rng.normal(size=(3, 3)).astype(np.float32)) + 0.5  # positive, for poisson and msle
        activation = "softplus" if name in ("poisson", "msle") else None
    return x, y.astype(np.float32), activation


@pytest.mark.parametrize("name", REGRESSION + CLASSIFICATION)
def test_each_loss_trains_a_model_by_name(name):
    """compile(loss=name) as Keras accepts it; ten epochs of Adam lower the loss."""
    x, y, activation = _problem(name)
    keras.utils.set_random_seed(1)
    model = keras.Sequential([keras.layers.Dense(y.shape[1], activation=activation, input_shape=(5,))])
    model.compile(keras.optimizers.Adam(0.05), name)
    history = model.fit(x, y, batch_size=16, epochs=10, verbose=0)
    assert history.history["loss"][-1] < 0.9 * history.history["loss"][0]
    assert np.isclose(model.evaluate(x, y, verbose=0), keras.losses.get(name)(y, model(x)).data, rtol=1e-5)


@pytest.mark.parametrize(
    "identifier, cls, name",
    [
        ("huber", keras.losses.Huber, "huber"),
        ("Huber", keras.losses.Huber, "huber_loss"),
        ("kullback_leibler_divergence", keras.losses.KLDivergence, "kullback_leibler_divergence"),
        ("MAPE", keras.losses.MeanAbsolutePercentageError, "mape"),
        (keras.losses.cosine_similarity, keras.losses.CosineSimilarity, "cosine_similarity"),
        (keras.losses.huber_loss, keras.losses.Huber, "huber_loss"),
    ],
)
def test_losses_by_keras_names_functions_and_class_names(identifier, cls, name):
    loss = keras.losses.get(identifier)
    assert type(loss) is cls and loss.name == name


def test_an_unknown_loss_lists_the_new_names():
    with pytest.raises(ValueError, match=r"Unknown loss function: 'hubber'\. Choose one of .*huber, log_cosh"):
        keras.losses.get("hubber")


def test_hinge_converts_zero_one_labels_only_when_all_are_zero_or_one():
    """Keras' _maybe_convert_labels: {0, 1} labels become {-1, 1}; any other value leaves them as given."""
    prediction = np.array([[0.5, -0.5]], np.float32)
    assert keras.losses.hinge(np.array([[1.0, 0.0]]), prediction).data == pytest.approx([0.5])
    assert keras.losses.hinge(np.array([[1.0, -1.0]]), prediction).data == pytest.approx([0.5])
    assert keras.losses.hinge(np.array([[1.0, 0.5]]), prediction).data == pytest.approx([(0.5 + 1.25) / 2])


@pytest.mark.parametrize(
    "loss, passes",
    [(keras.losses.Huber(), 6), (keras.losses.LogCosh(), 6), (keras.losses.CategoricalHinge(), 5)],
)
def test_a_new_loss_is_costed_on_the_ipu_from_what_it_declares(loss, passes):
    """A compute set per declared vector pass and one for the reduction over the last axis; the FLOPs are one
    per element per pass."""
    x, y, _ = _problem("categorical_hinge")
    configure_ipus(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        keras.backend.clear_session()
        model = keras.Sequential([keras.layers.Dense(3, input_shape=(5,))])
        model.compile("sgd", loss, steps_per_execution=4)
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    graph = model.get_ipu_executable("train").graph
    steps = [s for s in graph.forward if f"/{type(loss).__name__}:" in s.name]
    assert sum(s.flops for s in steps) == passes * 16 * 3
    assert len([s for s in steps if "/reduction" not in s.name]) == passes
    assert any(s.name.endswith("/reduction") for s in steps)
