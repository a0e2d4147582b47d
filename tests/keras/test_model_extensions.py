"""Keras' extension point (``keras.engine.extensions``): an extension registered for a model class gives
its methods and its own state to every model of that class built afterwards."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.keras.engine import extensions


class Greeting:
    """A test extension: one method, and state of its own on each model."""

    def __init__(self):
        self._greetings = []

    def greet(self, who):
        self._greetings.append(who)
        return f"{self.name} greets {who}"


@pytest.fixture
def registered():
    """Greeting registered for keras.Model for the test, and unregistered after it."""
    extensions.register_model_extension(keras.Model, Greeting)
    yield Greeting
    extensions.unregister_model_extension(keras.Model, Greeting)


def dense_model(name=None):
    inputs = keras.Input(shape=(3,))
    return keras.Model(inputs, keras.layers.Dense(2)(inputs), name=name)


def test_a_registered_extension_gives_its_methods_to_functional_and_sequential_models(registered):
    functional = dense_model(name="f")
    sequential = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))], name="s")
    assert functional.greet("you") == "f greets you"
    assert sequential.greet("me") == "s greets me"
    assert isinstance(functional, Greeting) and isinstance(sequential, (keras.Sequential, Greeting))
    assert (type(functional).__name__, type(sequential).__name__) == ("Model", "Sequential")  # Keras' names kept


def test_each_model_owns_the_extensions_state(registered):
    a, b = dense_model(), dense_model()
    a.greet("x")
    assert (a._greetings, b._greetings) == (["x"], [])
    assert type(a) is type(b)  # one composed class for all of them
    inputs = keras.Input(shape=(3,))
    again = type(a)(inputs, keras.layers.Dense(2)(inputs))  # building from a model's own class composes no further
    assert type(again) is type(a) and again._greetings == []


def test_a_subclass_of_model_gains_the_extension_and_keeps_its_own_init(registered):
    class Doubled(keras.Model):
        def __init__(self, units):
            inputs = keras.Input(shape=(3,))
            super().__init__(inputs, keras.layers.Dense(units)(inputs), name="doubled")
            self.units = units

    model = Doubled(4)
    assert model.units == 4 and model.greet("it") == "doubled greets it"
    assert isinstance(model, Doubled) and type(model).__name__ == "Doubled"


def test_models_built_before_registration_or_after_unregistration_do_not_have_the_method():
    before = dense_model(name="early")
    extensions.register_model_extension(keras.Model, Greeting)
    try:
        with pytest.raises(
            AttributeError,
            match=r"'Model' object has no attribute 'greet': `greet` comes from "
            r".*Greeting, registered after model `early` was built; .* build the "
            "model again",
        ):
            before.greet("anyone")
        assert dense_model().greet("someone").endswith("greets someone")
    finally:
        extensions.unregister_model_extension(keras.Model, Greeting)
    with pytest.raises(AttributeError, match=r"^'Model' object has no attribute 'greet'$"):
        dense_model().greet("no one")


def test_an_extension_may_not_hide_a_keras_method():
    class Refit:
        def fit(self, *args):
            return "not Keras' fit"

        def summary(self):
            return "nor this"

    with pytest.raises(
        ValueError,
        match="Refit cannot extend Model: fit, summary are already Model's; an extension "
        "adds methods and cannot replace Keras' own, so rename them",
    ):
        extensions.register_model_extension(keras.Model, Refit)
    assert Refit not in extensions.extensions_for(keras.Model)


def test_extensions_of_a_class_and_of_its_base_both_apply_and_an_inherited_one_once():
    class SequentialGreeting(Greeting):
        def wave(self):
            return f"{self.name} waves"

    extensions.register_model_extension(keras.Model, Greeting)
    extensions.register_model_extension(keras.Sequential, SequentialGreeting)
    try:
        assert extensions.extensions_for(keras.Sequential)[0] is SequentialGreeting
        assert Greeting not in extensions.extensions_for(keras.Sequential)  # SequentialGreeting already is one
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))], name="s")
        assert (model.wave(), model.greet("all")) == ("s waves", "s greets all")
        assert not hasattr(dense_model(), "wave")
    finally:
        extensions.unregister_model_extension(keras.Sequential, SequentialGreeting)
        extensions.unregister_model_extension(keras.Model, Greeting)


def test_an_announced_name_says_how_to_get_it_and_other_missing_names_stay_plain():
    model = dense_model()
    extensions.announce(["wave_hello"], "the waving package adds it; import it first")
    with pytest.raises(
        AttributeError,
        match="^'Model' object has no attribute 'wave_hello': the waving package adds it; import it first$",
    ):
        model.wave_hello()
    with pytest.raises(AttributeError, match="^'Model' object has no attribute 'no_such_thing'$"):
        model.no_such_thing  # noqa: B018


def test_an_extended_model_saves_and_loads(registered, tmp_path):
    model = dense_model(name="saved")
    model.compile("sgd", "mse")
    model.save(tmp_path / "m.keras")
    loaded = keras.models.load_model(tmp_path / "m.keras")
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.greet("back") == "saved greets back"
