"""Models are built from shapes, as Keras builds them: every layer states its output shape
(``compute_output_shape``), which must agree with a real forward pass, and building, adding to a
``Sequential`` or loading a model runs no layer on data, so its cost does not grow with the
declared input size nor (per layer added) with the number of earlier layers."""

import json
import tracemalloc
import zipfile

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.autograd.function import record
from ipu_teach.validation import BadFileError

L = keras.layers

# Each layer class of keras.layers: (arguments, input shape(s) without the batch axis).
LAYER_CASES = {
    L.Dense: [({"units": 3}, (5,)), ({"units": 2, "use_bias": False}, (4, 6)), ({"units": 1}, (2, 3, 4))],
    L.Flatten: [({}, (3,)), ({}, (2, 3, 4)), ({}, (1, 1))],
    L.Reshape: [
        ({"target_shape": (6,)}, (2, 3)),
        ({"target_shape": (-1, 2)}, (3, 4)),
        ({"target_shape": (2, -1, 3)}, (12,)),
    ],
    L.Dropout: [({"rate": 0.5}, (4,)), ({"rate": 0.1, "noise_shape": (None, 1, 3)}, (2, 3))],
    L.Activation: [({"activation": "relu"}, (3,)), ({"activation": "softmax"}, (2, 5))],
    L.ReLU: [({}, (4,)), ({}, (2, 3, 2))],
    L.Softmax: [({}, (5,)), ({}, (3, 2))],
    L.Conv2D: [
        ({"filters": 4, "kernel_size": 3}, (8, 7, 2)),
        ({"filters": 2, "kernel_size": (3, 2), "strides": 2, "padding": "same"}, (7, 5, 1)),
        ({"filters": 3, "kernel_size": (2, 3), "strides": (3, 2)}, (9, 8, 3)),
        ({"filters": 1, "kernel_size": 4, "padding": "same"}, (3, 2, 2)),
        ({"filters": 2, "kernel_size": 3, "dilation_rate": (2, 1)}, (6, 4, 1)),
    ],
    L.Conv1D: [
        ({"filters": 3, "kernel_size": 3}, (9, 2)),
        ({"filters": 2, "kernel_size": 2, "strides": 3, "padding": "same"}, (10, 1)),
        ({"filters": 4, "kernel_size": 3, "strides": 2, "padding": "causal"}, (7, 3)),
        ({"filters": 2, "kernel_size": 3, "dilation_rate": 2}, (8, 2)),
    ],
    L.MaxPooling2D: [
        ({}, (6, 5, 2)),
        ({"pool_size": 3, "strides": 2}, (7, 6, 1)),
        ({"pool_size": (2, 3), "padding": "same"}, (5, 7, 3)),
        ({"pool_size": 3, "padding": "same"}, (2, 2, 1)),
    ],
    L.AveragePooling2D: [({}, (4, 4, 3)), ({"pool_size": 2, "strides": 1, "padding": "same"}, (3, 5, 2))],
    L.GlobalAveragePooling2D: [({}, (4, 3, 2)), ({"keepdims": True}, (2, 5, 3))],
    L.GlobalMaxPooling2D: [({}, (4, 3, 2)), ({"keepdims": True}, (2, 5, 3))],
    L.ZeroPadding2D: [({}, (3, 4, 2)), ({"padding": ((1, 2), (0, 3))}, (4, 3, 2)), ({"padding": 2}, (1, 1, 1))],
    L.Permute: [({"dims": (2, 1)}, (3, 4)), ({"dims": (3, 1, 2)}, (2, 3, 4))],
    L.BatchNormalization: [({}, (4,)), ({}, (3, 3, 2))],
    L.LayerNormalization: [({}, (4,)), ({"center": False}, (2, 5))],
    L.GroupNormalization: [({"groups": 2}, (3, 4)), ({"groups": 1, "scale": False}, (2, 2, 6))],
    L.Embedding: [({"input_dim": 10, "output_dim": 3}, (4,)), ({"input_dim": 5, "output_dim": 2}, (3, 2))],
    L.LSTM: [({"units": 3}, (4, 2)), ({"units": 2, "return_sequences": True, "go_backwards": True}, (5, 3))],
    L.GRU: [({"units": 4}, (3, 2)), ({"units": 2, "return_sequences": True}, (4, 1))],
    L.Add: [({}, [(3,), (3,)]), ({}, [(2, 3), (1, 3), (2, 1)])],
    L.Subtract: [({}, [(4,), (4,)]), ({}, [(2, 3), (3,)])],
    L.Multiply: [({}, [(2, 3), (2, 3), (2, 3)]), ({}, [(1,), (5,)])],
    L.Average: [({}, [(3,), (3,)]), ({}, [(3, 1), (3, 4)])],
    L.Lambda: [
        ({"function": lambda t: t * 2.0}, (5,)),
        ({"function": lambda ts: ts[0] * ts[1], "output_shape": (2, 3)}, [(2, 3), (2, 3)]),
    ],
    L.Concatenate: [
        ({}, [(2, 3), (2, 4)]),
        ({"axis": 1}, [(3, 2), (4, 2), (1, 2)]),
        ({"axis": -2}, [(1, 2, 2), (1, 3, 2)]),
    ],
    # issue 25's layers (tests/keras/test_layers_breadth.py compares them with tf-keras)
    L.LeakyReLU: [({}, (4,)), ({"alpha": 0.1}, (2, 3))],
    L.ThresholdedReLU: [({"theta": 0.5}, (4,))],
    L.ELU: [({"alpha": 0.5}, (2, 3))],
    L.PReLU: [({}, (4,)), ({"shared_axes": [1, 2]}, (3, 2, 2))],
    L.Conv2DTranspose: [
        ({"filters": 2, "kernel_size": 3, "strides": 2}, (3, 4, 2)),
        ({"filters": 3, "kernel_size": (2, 3), "strides": (3, 1), "padding": "same"}, (2, 3, 1)),
        ({"filters": 1, "kernel_size": 3, "dilation_rate": 2}, (3, 3, 2)),
    ],
    L.DepthwiseConv2D: [
        ({"kernel_size": 3, "depth_multiplier": 2}, (5, 4, 2)),
        ({"kernel_size": 2, "strides": 2, "padding": "same"}, (5, 3, 3)),
    ],
    L.SeparableConv2D: [({"filters": 3, "kernel_size": 3, "dilation_rate": 2}, (6, 5, 2))],
    L.UpSampling2D: [({}, (2, 3, 1)), ({"size": (1, 3)}, (2, 2, 2))],
    L.Cropping2D: [({"cropping": 1}, (4, 3, 2)), ({"cropping": ((0, 2), (1, 0))}, (3, 2, 1))],
    L.SpatialDropout2D: [({"rate": 0.5}, (3, 3, 2))],
    L.GaussianNoise: [({"stddev": 0.1}, (4,))],
    L.Rescaling: [({"scale": 0.5, "offset": 1.0}, (2, 3))],
    L.Bidirectional: [
        ({"layer": {"class_name": "LSTM", "config": {"units": 2, "return_sequences": True}}}, (4, 3)),
        ({"layer": {"class_name": "GRU", "config": {"units": 3, "reset_after": False}}, "merge_mode": "sum"}, (3, 2)),
    ],
    L.Normalization: [({"mean": 1.0, "variance": 4.0}, (3,)), ({"axis": None}, (2, 2))],
    # issue 24's attention (tests/keras/test_attention_layers.py compares them with tf-keras)
    L.EinsumDense: [({"equation": "abc,cde->abde", "output_shape": (None, 2, 3), "bias_axes": "de"}, (4, 5))],
    L.MultiHeadAttention: [
        ({"num_heads": 2, "key_dim": 3}, [(4, 6), (5, 6)]),
        ({"num_heads": 2, "key_dim": 2, "value_dim": 3, "dropout": 0.5, "output_shape": 2}, [(3, 4), (5, 6), (5, 5)]),
    ],
}


def layer_classes():
    """Every layer class keras.layers offers (aliases counted once), but the base and the input."""
    found = {getattr(L, name) for name in L.__all__}
    return {c for c in found if isinstance(c, type) and issubclass(c, L.Layer) and c not in (L.Layer, L.InputLayer)}


def test_every_layer_class_has_shape_cases_and_states_its_output_shape():
    assert set(LAYER_CASES) == layer_classes()
    for cls in LAYER_CASES:  # not the default, which runs `call` on a zero sample (for custom layers)
        assert cls.compute_output_shape is not L.Layer.compute_output_shape, cls.__name__


def sample(cls, arguments, shape, batch=3, seed=0):
    rng = np.random.default_rng(seed)
    if cls is L.Embedding:
        return rng.integers(0, arguments["input_dim"], size=(batch,) + shape).astype(np.float32)
    return rng.normal(size=(batch,) + shape).astype(np.float32)


CASES = [(cls, arguments, shape) for cls, cases in LAYER_CASES.items() for arguments, shape in cases]


@pytest.mark.parametrize("cls, arguments, shape", CASES, ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_output_shape_from_shapes_is_the_shape_of_a_forward_pass(cls, arguments, shape):
    multi = isinstance(shape, list)
    symbolic = [keras.Input(s) for s in shape] if multi else keras.Input(shape)
    layer = cls(**arguments)
    with record() as ops:
        built = layer(symbolic)
    assert ops == []  # from shapes alone
    batched = [(None,) + s for s in shape] if multi else (None,) + shape
    assert layer.compute_output_shape(batched) == built.shape == layer.output_shape
    data = [sample(cls, arguments, s, seed=i) for i, s in enumerate(shape)] if multi else sample(cls, arguments, shape)
    for training in (False, True):
        assert (None,) + layer(data, training=training).shape[1:] == built.shape


@pytest.mark.parametrize(
    "make, shape, expected, real",
    [
        (lambda: L.LSTM(3, return_sequences=True), (None, 2), (None, None, 3), (6, 2)),
        (lambda: L.GRU(2), (None, 4), (None, 2), (3, 4)),
        (lambda: L.Flatten(), (None, 2), (None, None), (5, 2)),
        (lambda: L.Reshape((-1, 2)), (None, 4), (None, None, 2), (3, 4)),
        (lambda: L.Conv2D(2, 3), (None, 6, 1), (None, None, 4, 2), (5, 6, 1)),
        (lambda: L.MaxPooling2D(), (7, None, 2), (None, 3, None, 2), (7, 9, 2)),
        (lambda: L.ZeroPadding2D(1), (None, 3, 1), (None, None, 5, 1), (2, 3, 1)),
        (lambda: L.Conv1D(2, 3, strides=2), (None, 3), (None, None, 2), (9, 3)),
    ],
)
def test_an_unknown_size_stays_unknown_and_fits_the_real_size(make, shape, expected, real):
    """Keras' `Input(shape=(None, features))`: known only when data comes; before, building ran a zero
    sample through the layer, which cannot have an unknown size."""
    layer = make()
    built = layer(keras.Input(shape))
    assert built.shape == expected
    out = layer(np.ones((2,) + real, np.float32)).shape
    assert all(want is None or want == got for want, got in zip(expected[1:], out[1:]))


@pytest.mark.parametrize(
    "make, shape, weight",
    [
        (lambda: L.Dense(2), (None,), r"'kernel' would have shape \(None, 2\)"),
        (lambda: L.Conv2D(3, 2), (4, 4, None), r"'kernel' would have shape \(2, 2, None, 3\)"),
        (lambda: L.BatchNormalization(), (3, None), r"'gamma' would have shape \(None,\)"),
        (lambda: L.LSTM(2), (5, None), r"'kernel' would have shape \(None, 8\)"),
    ],
)
def test_a_weight_sized_by_an_unknown_axis_is_an_error_naming_layer_and_weight(make, shape, weight):
    """Keras refuses these when the layer is built ("The last dimension of the inputs to a Dense layer
    should be defined. Found None."); it was a raw TypeError from the initializer."""
    layer = make()
    with pytest.raises(ValueError, match=f'Layer "{layer.name}": its weight {weight}, a size taken from an axis'):
        layer(keras.Input(shape))


def test_a_model_with_an_unknown_size_takes_data_of_any_size_there():
    inputs = keras.Input((None, 2))
    model = keras.Model(inputs, L.Dense(1)(L.LSTM(3)(inputs)))
    model.compile("sgd", "mse")
    assert model.predict(np.ones((4, 5, 2), np.float32), verbose=0).shape == (4, 1)
    history = model.fit(np.ones((4, 7, 2), np.float32), np.ones((4, 1), np.float32), verbose=0)
    assert len(history.history["loss"]) == 1
    with pytest.raises(ValueError, match=r"expected shape=\(None, None, 2\), found shape=\(4, 5, 3\)"):
        model.predict(np.ones((4, 5, 3), np.float32), verbose=0)


def test_merge_layers_compute_shapes_with_unknown_sizes_too():
    assert L.Add()([keras.Input((None, 3)), keras.Input((1, 3))]).shape == (None, None, 3)
    assert L.Concatenate(axis=1)([keras.Input((None, 3)), keras.Input((2, 3))]).shape == (None, None, 3)
    assert L.Concatenate()([keras.Input((4, 3)), keras.Input((4, 2))]).shape == (None, 4, 5)


@pytest.mark.parametrize(
    "make, shape, message",
    [
        (
            lambda: L.Conv2D(2, 5, name="c"),
            (3, 3, 1),
            """Conv2D "c": a kernel_size of 5x5 does not fit an input of 3x3""",
        ),
        (lambda: L.Conv1D(2, 4, name="c1"), (3, 2), """Conv1D "c1": a kernel_size of 4 does not fit an input of 3"""),
        (
            lambda: L.MaxPooling2D(3, name="p"),
            (2, 2, 1),
            """MaxPooling2D "p": a pool_size of 3x3 does not fit an input of 2x2""",
        ),
        (lambda: L.AveragePooling2D((1, 4), name="a"), (5, 3, 1), "a pool_size of 1x4 does not fit an input of 5x3"),
    ],
)
def test_a_window_larger_than_its_input_names_the_layer(make, shape, message):
    """TensorFlow refuses these when the model is built ("Negative dimension size"); pooling used to
    give an output with no values."""
    with pytest.raises(ValueError, match=message + " with padding 'valid'; use padding='same' or a smaller"):
        make()(keras.Input(shape))


def count_shape_computations(monkeypatch, cls):
    calls = []
    compute = cls.compute_output_shape

    def counted(self, input_shape):
        calls.append(self.name)
        return compute(self, input_shape)

    monkeypatch.setattr(cls, "compute_output_shape", counted)
    return calls


def test_sequential_add_and_load_model_compute_each_layer_once(monkeypatch, tmp_path):
    """Each `add` calls the new layer alone on the model's output (Keras' Sequential.add); it used to
    run every earlier layer again (1,000 layers: n(n+1)/2 = 500,500 layer runs, 48 s)."""
    n = 60
    calls = count_shape_computations(monkeypatch, L.Dense)
    with record() as ops:
        model = keras.Sequential([keras.Input((8,))] + [L.Dense(8) for _ in range(n)])
        model.add(L.Dense(4))
    assert len(calls) == n + 1 and len(set(calls)) == n + 1
    model.save(tmp_path / "deep.zip")
    del calls[:]
    with record() as more_ops:
        loaded = keras.models.load_model(tmp_path / "deep.zip")
    assert len(calls) == n + 1
    assert ops == more_ops == []
    assert loaded.output_shape == (None, 4) and len(loaded.layers) == n + 1
    x = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


def test_sequential_pop_then_add_is_the_model_built_in_one_go():
    keras.utils.set_random_seed(7)
    model = keras.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(5), L.Dense(6)])
    model.pop()
    model.add(L.Dense(2))
    keras.utils.set_random_seed(7)
    one_go = keras.Sequential([L.Dense(4, input_shape=(3,)), L.Dense(5), L.Dense(6)])
    one_go = keras.Sequential(one_go.layers[:2] + [L.Dense(2)])
    assert [layer.output_shape for layer in model.layers] == [(None, 4), (None, 5), (None, 2)]
    assert model.output_shape == (None, 2) and len(model.layers) == 3
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), one_go.predict(x, verbose=0))
    model.pop(), model.pop(), model.pop()
    assert model.layers == [] and not model.built
    with pytest.raises(TypeError, match="There are no layers in the model"):
        model.pop()


def test_a_shared_layer_added_twice_is_listed_once_and_runs_twice():
    shared, relu = L.Dense(3), L.ReLU()
    model = keras.Sequential([keras.Input((3,)), shared, relu])
    model.add(shared)
    assert model.layers == [shared, relu] and model.count_params() == 12
    assert model.output_shape == (None, 3)
    x = np.ones((1, 3), np.float32)
    expected = shared(relu(shared(x))).data
    np.testing.assert_allclose(model.predict(x, verbose=0), expected, rtol=1e-6)


def test_a_model_used_as_a_layer_states_its_output_shape_from_its_layers():
    inner = keras.Sequential([L.Conv2D(2, 3), L.Flatten(), L.Dense(4)])
    assert inner.compute_output_shape((None, 6, 5, 1)) == (None, 4)
    inputs = keras.Input((6, 5, 1))
    with record() as ops:
        outer = keras.Model(inputs, L.Dense(1)(inner(inputs)))
    assert ops == [] and outer.output_shape == (None, 1)
    assert outer.predict(np.ones((2, 6, 5, 1), np.float32), verbose=0).shape == (2, 1)


def crafted_model_file(tmp_path, model, edit):
    """``model`` saved, then its architecture changed by ``edit(layers' descriptions)`` as an attacker
    would change it (the weights stay those of ``model``)."""
    model.save(tmp_path / "small.zip")
    with zipfile.ZipFile(tmp_path / "small.zip") as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    description = json.loads(entries["config.json"])
    edit(description["model"]["layers"])
    entries["config.json"] = json.dumps(description).encode()
    path = tmp_path / "crafted.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def peak_bytes(function):
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def declare_input(shape):
    def edit(layers):
        layers[0]["config"]["shape"] = shape

    return edit


def test_a_model_file_declaring_a_huge_input_loads_without_allocating_activations(tmp_path):
    """A few hundred bytes declaring an input of (60000, 60000): 3.6e9 values per sample, 13.4 GiB for
    the zero sample building used to run. Its layers have no weights, so only building can cost memory."""
    inputs = keras.Input((2, 3))
    small = keras.Model(inputs, L.Flatten()(L.ReLU()(inputs)))
    path = crafted_model_file(tmp_path, small, declare_input([60000, 60000]))
    assert path.stat().st_size < 1000
    with record() as ops:
        model, peak = peak_bytes(lambda: keras.models.load_model(path))
    assert ops == [] and peak < 32 * 2**20  # was 13.4 GiB (a zero sample of the declared shape)
    assert model.output_shape == (None, 3_600_000_000)


def test_a_huge_declared_input_costs_only_its_weights():
    """Keras allocates the weights a model declares: Dense(2) on 60000 features has 120,002 of them,
    a half MiB; no activation is made."""
    model, peak = peak_bytes(lambda: keras.Sequential([keras.Input((60000, 60000)), L.Dense(2)]))
    assert model.output_shape == (None, 60000, 2) and model.count_params() == 120_002
    assert peak < 32 * 2**20


def test_a_model_file_declaring_weights_it_does_not_hold_is_refused_before_they_are_allocated(tmp_path):
    """Every weight must come from the file, so the architecture may not declare more values than the
    file's weights hold: Dense(2000) on 3000 features (6,000,000 values, 24 MB) with 8 values stored.
    Keras would allocate and initialise them, then fail; at Dense(50000) that is 10 GB."""

    def widen(layers):
        layers[0]["config"]["shape"] = [3000]
        layers[1]["config"]["units"] = 2000

    small = keras.Sequential([keras.Input((3,)), L.Dense(2)])
    path = crafted_model_file(tmp_path, small, widen)
    message = (
        r"crafted.zip is not a valid model file: its architecture declares a weight dense/kernel:0 of "
        r"shape \(3000, 2000\) \(6,000,000 values\), more than its weights \(model.weights.npz, [\d,]+ bytes\) "
        r"hold; load a file written by model.save"
    )

    def load():
        with pytest.raises(BadFileError, match=message):
            keras.models.load_model(path)

    _, peak = peak_bytes(load)
    assert peak < 4 * 2**20
    assert keras.models.load_model(tmp_path / "small.zip").count_params() == 8  # a file as saved loads
