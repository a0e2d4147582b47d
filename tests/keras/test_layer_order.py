"""``model.layers`` of a functional model in Keras' order (deepest from the outputs first), as tf-keras lists
them: checked against tf-keras in test_keras_files.py (two_inputs) and test_keras_format.py (branches), from
layer names Keras recorded. Weights follow the layers, as in Keras; ipu-teach's own files keep their order."""

import numpy as np

import ipu_teach.keras as keras


def skip_connection():
    """x -> a -> b -> add(x-path c, b): Keras lists a (deeper) before c though c's call comes first."""
    keras.utils.set_random_seed(7)
    inputs = keras.Input((3,), name="x")
    c = keras.layers.Dense(3, name="c")(inputs)
    b = keras.layers.Dense(3, name="b")(keras.layers.Dense(3, name="a")(inputs))
    return keras.Model(inputs, keras.layers.Add(name="add")([c, b]))


def test_a_skip_connection_lists_its_layers_deepest_first_as_keras():
    model = skip_connection()
    assert [layer.name for layer in model.layers] == ["x", "a", "c", "b", "add"]  # tf-keras 2.21's order
    assert [w.name.split("/")[0] for w in model.weights][::2] == ["a", "c", "b"]
    model.summary(print_fn=lambda line, **_: None)  # the summary lists them so too


def test_ipu_teachs_own_weight_files_keep_each_layers_weights_at_its_first_use(tmp_path):
    """A file of ipu-teach's saved before the order followed Keras' (c's kernel first) still loads into c."""
    model = skip_connection()
    model.save_weights(tmp_path / "w.npz")
    model.save(tmp_path / "m.zip")
    with np.load(tmp_path / "w.npz") as saved:
        np.testing.assert_array_equal(saved["w0"], model.get_layer("c").kernel.data)
    x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    fresh = skip_connection()
    fresh.set_weights([np.zeros_like(w) for w in fresh.get_weights()])
    fresh.load_weights(tmp_path / "w.npz")
    np.testing.assert_array_equal(fresh.predict(x, verbose=0), model.predict(x, verbose=0))
    np.testing.assert_array_equal(
        keras.models.load_model(tmp_path / "m.zip").predict(x, verbose=0), fresh.predict(x, verbose=0)
    )
