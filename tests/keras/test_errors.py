"""Bad input: a clear error, raised before any work is done, naming what to change; inputs untouched."""

import numpy as np
import pytest
from keras_helpers import tiny_classification, tiny_cnn, tiny_dense_model

import ipu_teach.keras as keras


def compiled(model, loss="sparse_categorical_crossentropy"):
    model.compile("sgd", loss, metrics=["accuracy"])
    return model


def assert_untrained(model, before):
    assert model.optimizer.iterations == 0
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_images_without_channel_axis_get_the_expand_dims_hint():
    model = compiled(tiny_cnn())
    before = model.get_weights()
    x = np.zeros((10, 8, 8), np.float32)
    with pytest.raises(
        ValueError,
        match=r'layer "model".*expected shape=\(None, 8, 8, 1\), '
        r"found shape=\(10, 8, 8\).*np.expand_dims\(x, -1\)",
    ):
        model.fit(x, np.zeros(10, int), verbose=0)
    with pytest.raises(ValueError, match="np.expand_dims"):
        model.predict(x, verbose=0)
    assert_untrained(model, before)


def test_data_of_wrong_feature_size():
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"expected shape=\(None, 4\), found shape=\(6, 5\)"):
        model.evaluate(np.zeros((6, 5), np.float32), np.zeros(6, int), verbose=0)


def test_sparse_labels_with_categorical_loss_suggest_to_categorical():
    x, y = tiny_classification(n=12)
    model = compiled(tiny_dense_model(), "categorical_crossentropy")
    before = model.get_weights()
    with pytest.raises(
        ValueError,
        match=r"categorical_crossentropy.*\(12,\).*to_categorical\(y, 3\)"
        r".*sparse_categorical_crossentropy",
    ):
        model.fit(x, y, verbose=0)
    assert_untrained(model, before)


def test_one_hot_labels_with_sparse_loss_suggest_categorical():
    x, y = tiny_classification(n=12)
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"\(12, 3\).*loss='categorical_crossentropy'"):
        model.fit(x, keras.utils.to_categorical(y, 3), verbose=0)


def test_sparse_labels_out_of_range():
    x, y = tiny_classification(n=12)
    with pytest.raises(ValueError, match=r"integers in \[0, 3\)"):
        compiled(tiny_dense_model()).fit(x, y + 5, verbose=0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"optimizer": "adagrad_typo", "loss": "mse"}, r"adagrad_typo.*'sgd', 'adam', 'rmsprop'"),
        (
            {"optimizer": "sgd", "loss": "cross_entropy"},
            r"cross_entropy.*categorical_crossentropy, "
            r"sparse_categorical_crossentropy, binary_crossentropy",
        ),
        ({"optimizer": "sgd", "loss": "mse", "metrics": ["acuracy"]}, r"acuracy.*accuracy.*categorical_accuracy"),
    ],
)
def test_unknown_names_list_the_choices(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tiny_dense_model().compile(**kwargs)


def test_x_and_y_of_different_lengths():
    x, y = tiny_classification(n=12)
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"x sizes: 12\n  y sizes: 10\nMake sure all arrays contain the same"):
        model.fit(x, y[:10], verbose=0)
    with pytest.raises(ValueError, match="x sizes: 12"):
        model.evaluate(x, y[:10], verbose=0)
    assert model.optimizer.iterations == 0


def test_unknown_layer_argument_names_the_layer():
    with pytest.raises(TypeError, match=r"Dense.*\['unit'\]"):
        keras.layers.Dense(3, unit=4)


def test_nothing_passed_is_modified_in_place():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 8, 8, 1)).astype(np.float32)
    y = keras.utils.to_categorical(np.arange(20) % 3, 3)
    x_int = (rng.random((20, 8, 8, 1)) * 255).astype(np.uint8)
    copies = [a.copy() for a in (x, y, x_int)]
    model = tiny_cnn(dropout=0.5)
    model.compile("adam", keras.losses.CategoricalCrossentropy(label_smoothing=0.1), metrics=["accuracy"])
    model.fit(x, y, batch_size=6, epochs=2, validation_split=0.2, verbose=0)
    model.fit(x_int, y, batch_size=6, epochs=1, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    for a, b in zip((x, y, x_int), copies):
        np.testing.assert_array_equal(a, b)
    labels = np.arange(5)
    keras.utils.to_categorical(labels, 5)
    np.testing.assert_array_equal(labels, np.arange(5))


@pytest.mark.parametrize("bad_label", [-1, 3])
def test_a_bad_sparse_label_late_in_the_data_is_caught_before_training(bad_label):
    x, y = tiny_classification(n=40)
    y[-1] = bad_label  # in the last batch: checking the first batch alone would miss it
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"integers in \[0, 3\)"):
        model.fit(x, y, batch_size=8, verbose=0)
    assert model.optimizer.iterations == 0


def test_bad_validation_data_is_caught_before_training():
    x, y = tiny_classification(n=16)
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"expected shape=\(None, 4\), found shape=\(4, 2\)"):
        model.fit(x, y, validation_data=(x[:4, :2], y[:4]), verbose=0)
    with pytest.raises(ValueError, match=r"x sizes: 4\n  y sizes: 3"):
        model.fit(x, y, validation_data=(x[:4], y[:3]), verbose=0)
    assert model.optimizer.iterations == 0


@pytest.mark.parametrize(
    "call, argument, value",
    [
        ("fit", "steps_per_epoch", -3),
        ("fit", "steps_per_epoch", 0),
        ("fit", "steps_per_epoch", 2.5),
        ("fit", "validation_steps", -3),
        ("evaluate", "steps", -3),
        ("predict", "steps", 0),
    ],
)
def test_a_number_of_steps_that_is_not_positive_names_the_argument(call, argument, value):
    """Was a raw islice error ('Indices for islice() must be None or an integer')."""
    model = compiled(tiny_dense_model())
    before = model.get_weights()
    x, y = tiny_classification(16)
    kwargs = {
        "fit": {"x": x, "y": y, "verbose": 0, "validation_data": (x, y)},
        "evaluate": {"x": x, "y": y, "verbose": 0},
        "predict": {"x": x, "verbose": 0},
    }[call]
    with pytest.raises(
        ValueError,
        match=rf"`{argument}` must be a positive integer, the number of batches, or None for all the data; "
        rf"got {argument}={value}$",
    ):
        getattr(model, call)(**kwargs, **{argument: value})
    assert_untrained(model, before)


def test_steps_per_epoch_minus_one_says_what_keras_means_by_it():
    model = compiled(tiny_dense_model())
    with pytest.raises(ValueError, match=r"steps_per_epoch=-1 \(Keras reads -1 as 'until the data ends'.*None for"):
        model.fit(*tiny_classification(16), steps_per_epoch=-1, verbose=0)
