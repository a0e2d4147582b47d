"""``keras.applications.ResNet50`` and ``MobileNetV2`` against real tf-keras: the same layers (names, classes,
output shapes, parameter counts, in order), the same model names and weights, and the same inference output from
the same seeded weights; and ``weights="imagenet"`` read from Keras' models folder, never downloaded.

The fixture ``golden/applications.json`` was written by ``tools/make_keras_goldens.py`` (section ``applications``)
with TensorFlow and tf-keras in a separate environment; these tests need neither. ResNet-50's weights (98 MB)
are too large for a fixture: the tool and the test draw the same values from a seed instead
(``golden_models.application_weights``).
"""

import json
import pathlib

import numpy as np
import pytest
from golden_models import application_weights

import ipu_teach.keras as keras

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "applications.json").read_text())
CASES = {case["id"]: case for case in GOLDEN["cases"]}


def _built(case):
    """The case's model, built by ipu-teach from a fresh session (so default layer names start from scratch)."""
    keras.backend.clear_session()
    arguments = {k: tuple(v) if isinstance(v, list) else v for k, v in case["arguments"].items()}
    return getattr(keras.applications, case["function"])(weights=None, **arguments)


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda case: case["id"])
def test_layers_names_shapes_and_parameters_match_keras(case):
    model = _built(case)
    assert model.name == case["name"]
    # model.layers is in Keras' order (that of its .h5 files), also where branches meet
    built = [
        [layer.name, type(layer).__name__, list(layer.output_shape), layer.count_params()] for layer in model.layers
    ]
    # tf-keras gives an InputLayer's output_shape as a list of its one shape
    expected = [[n, c, s[0] if c == "InputLayer" else s, p] for n, c, s, p in case["layers"]]
    assert built == expected
    assert model.count_params() == sum(row[3] for row in case["layers"])


@pytest.mark.parametrize("case", [c for c in GOLDEN["cases"] if "output" in c], ids=lambda case: case["id"])
def test_inference_output_matches_keras_from_the_same_weights(case):
    model = _built(case)
    in_keras_order = model.weights
    assert [[w.name, list(w.shape)] for w in in_keras_order] == case["weights"]
    values = iter(application_weights(case["weights"], case["seed"]))
    for layer in model.layers:
        layer.set_weights([next(values) for _ in layer.weights])
    shape = (2,) + tuple(case["arguments"]["input_shape"])
    x = np.random.default_rng(case["seed"]).uniform(-1, 1, shape).astype(np.float32)
    expected = np.asarray(case["output"], np.float32)
    output = model.predict(x, verbose=0)
    np.testing.assert_allclose(output, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_the_published_sizes():
    """Keras' documented parameter counts (keras.io/api/applications): 25.6 M and 3.5 M."""
    assert keras.applications.ResNet50(weights=None).count_params() == 25_636_712
    assert keras.applications.MobileNetV2(weights=None).count_params() == 3_538_984


def test_imagenet_weights_are_never_downloaded_and_the_error_names_file_and_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    folder = tmp_path / "keras" / "models"
    with pytest.raises(FileNotFoundError) as raised:
        keras.applications.MobileNetV2(alpha=0.35, input_shape=(96, 96, 3), include_top=False)
    message = str(raised.value)
    assert "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5" in message
    assert str(folder) in message and "weights=None" in message and "downloads nothing" in message
    with pytest.raises(FileNotFoundError, match="resnet50_weights_tf_dim_ordering_tf_kernels.h5"):
        keras.applications.ResNet50()


def test_imagenet_weights_are_loaded_from_keras_models_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    folder = tmp_path / "keras" / "models"
    folder.mkdir(parents=True)
    source = keras.applications.MobileNetV2(alpha=0.35, input_shape=(96, 96, 3), include_top=False, weights=None)
    source.save_weights(str(folder / "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"))
    loaded = keras.applications.MobileNetV2(alpha=0.35, input_shape=(96, 96, 3), include_top=False)
    for mine, theirs in zip(loaded.get_weights(), source.get_weights()):
        np.testing.assert_array_equal(mine, theirs)
    fresh = keras.applications.MobileNetV2(alpha=0.35, input_shape=(96, 96, 3), include_top=False, weights=None)
    assert not np.array_equal(fresh.get_weights()[0], source.get_weights()[0])


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"weights": "nowhere.h5"}, "The `weights` argument should be either"),
        ({"weights": "imagenet", "classes": 10}, "`classes` should be 1000. Received `classes=10`"),
        ({"weights": None, "input_shape": (16, 16, 3)}, "Input size must be at least 32x32"),
        ({"weights": None, "input_shape": (224, 224)}, "`input_shape` must be a tuple of three integers."),
        ({"weights": None, "include_top": True, "input_shape": (None, None, 3)}, "should specify a static"),
        ({"weights": "imagenet", "input_shape": (96, 96, 3)}, "`input_shape` should be (224, 224, 3)"),
        ({"weights": "imagenet", "classifier_activation": "relu"}, "Only `None` and `softmax` activations"),
    ],
)
def test_bad_arguments_are_refused_in_keras_words(arguments, message):
    with pytest.raises(ValueError) as raised:
        keras.applications.ResNet50(**arguments)
    assert message in str(raised.value)


def test_mobilenet_v2_alpha_without_pretrained_weights_is_refused():
    with pytest.raises(ValueError, match="alpha must be one of `0.35`"):
        keras.applications.MobileNetV2(alpha=0.6)


def test_global_max_pooling_is_each_channels_maximum():
    x = np.random.default_rng(0).normal(size=(2, 5, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(keras.layers.GlobalMaxPooling2D()(x).data, x.max(axis=(1, 2)))
    assert keras.layers.GlobalMaxPooling2D(keepdims=True)(x).data.shape == (2, 1, 1, 4)


@pytest.mark.parametrize("mode", ["caffe", "tf", "torch"])
def test_preprocess_input_matches_keras_and_leaves_the_images_as_given(mode):
    pixels = np.asarray(GOLDEN["pixels"], np.uint8)
    given = pixels.copy()
    output = keras.applications.imagenet_utils.preprocess_input(pixels, mode=mode)
    assert output.dtype == np.float32
    np.testing.assert_allclose(output, GOLDEN["preprocessed"][mode], rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(pixels, given)
    floats = pixels.astype(np.float32)
    keras.applications.imagenet_utils.preprocess_input(floats, mode=mode)
    np.testing.assert_array_equal(floats, given)  # Keras would have changed a float array in place


def test_each_model_preprocesses_as_it_was_trained():
    pixels = np.asarray(GOLDEN["pixels"], np.uint8)
    for module, mode in ((keras.applications.resnet50, "caffe"), (keras.applications.mobilenet_v2, "tf")):
        np.testing.assert_allclose(module.preprocess_input(pixels), GOLDEN["preprocessed"][mode], rtol=1e-6, atol=1e-5)
    assert keras.applications.resnet50.ResNet50 is keras.applications.ResNet50
    with pytest.raises(ValueError, match="Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode=cv2"):
        keras.applications.imagenet_utils.preprocess_input(pixels, mode="cv2")
