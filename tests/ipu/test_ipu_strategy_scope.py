"""Where a model runs follows TensorFlow's rules for a distribution strategy (tf-keras 2.6 engine/training.py,
as in graphcore/keras; tensorflow/python/distribute/distribute_lib.py): a model keeps the strategy it was
created under, a model with weights cannot move into a scope, strategies do not mix, scopes are per thread."""

import threading

import numpy as np
import pytest
from helpers.models import compile_model
from ipu_test_helpers import build, configure, data

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.ipu.executor import IPUExecutor


def test_a_model_created_in_the_scope_and_compiled_again_outside_still_trains_on_the_ipu():
    """Recompiling to change the learning rate (outside the scope) used to put the model on the CPU, silently."""
    configure(1)
    x, y = data(64)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = compile_model(build())
    model.fit(x, y, batch_size=16, verbose=0)
    model.compile(keras.optimizers.SGD(0.5), "categorical_crossentropy")  # outside the scope
    assert isinstance(model.device_executor, IPUExecutor)
    before = model.get_weights()
    model.fit(x, y, batch_size=16, verbose=0)
    assert model.get_ipu_executable("train").seconds_per_execution > 0  # ran on the simulated IPU
    with pytest.raises(ipu.IPURuleError, match=r"first 48 samples"):  # the IPU's rule, not the CPU's partial batch
        model.fit(x[:50], y[:50], batch_size=16, verbose=0)
    assert not np.array_equal(before[0], model.get_weights()[0])


def test_a_model_created_in_the_scope_and_compiled_outside_is_placed_on_the_ipu():
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build()
    compile_model(model)
    assert isinstance(model.device_executor, IPUExecutor)


def test_a_model_with_weights_created_outside_the_scope_cannot_be_compiled_in_it():
    """Keras' own ValueError: the model's variables were not created on the IPU. Nothing is changed."""
    configure(1)
    model = build()
    compile_model(model)
    optimizer = model.optimizer
    with ipu.ipu_strategy.IPUStrategy().scope():
        with pytest.raises(
            ValueError,
            match=r"Variable \(dense/kernel:0\) was not created in the distribution strategy scope of "
            r"\(<ipu_teach\.ipu\.ipu_strategy\.IPUStrategy object at .*\)\. .*\n"
            r"with strategy\.scope\(\):\n  model=_create_model\(\)\n  model\.compile\(\.\.\.\)",
        ):
            model.compile("adam", "mse")
    assert model.optimizer is optimizer and model.device_executor is None


def test_a_model_without_weights_yet_takes_the_scope_it_is_compiled_in():
    """As in Keras, whose variables would be created in the scope, on the first call."""
    configure(1)
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax")])  # no input shape: no weights yet
    with ipu.ipu_strategy.IPUStrategy().scope():
        model.compile("sgd", "categorical_crossentropy")
    assert isinstance(model.device_executor, IPUExecutor)


def test_a_model_compiled_in_another_strategys_scope_is_refused():
    configure(1)
    created_under, other = ipu.ipu_strategy.IPUStrategy(), ipu.ipu_strategy.IPUStrategy()
    with created_under.scope():
        model = compile_model(build())
    executor = model.device_executor
    with (
        other.scope(),
        pytest.raises(
            RuntimeError,
            match=r"Mixing different tf.distribute.Strategy objects: <.*IPUStrategy object at .*> is not "
            r"<.*IPUStrategy object at .*>\. `model` was created in the scope of the second and keeps it: compile it "
            r"in that strategy's scope, or outside any scope\.",
        ),
    ):
        model.compile("sgd", "categorical_crossentropy")
    assert model.device_executor is executor
    with created_under.scope():  # its own strategy's scope, entered again: fine
        compile_model(model)


def test_one_strategys_scope_cannot_be_entered_inside_anothers():
    first, second = ipu.ipu_strategy.IPUStrategy(), ipu.ipu_strategy.IPUStrategy()
    with first.scope():
        with first.scope():  # the same strategy again: fine, as in TensorFlow
            pass
        with pytest.raises(RuntimeError, match=r"Mixing different tf.distribute.Strategy objects: .* leave the first"):
            with second.scope():
                pass


def test_a_scope_open_in_one_thread_places_nothing_compiled_in_another():
    """TensorFlow's strategy stack is per thread: a model compiled in the main thread while a worker thread is
    in a scope runs on the CPU (it used to be placed on the IPU)."""
    configure(1)
    strategy = ipu.ipu_strategy.IPUStrategy()
    inside, leave, placed = threading.Event(), threading.Event(), {}

    def worker():
        with strategy.scope():
            placed["worker"] = compile_model(build(new_session=False)).device_executor
            inside.set()
            leave.wait(timeout=60)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert inside.wait(timeout=60)
        placed["main"] = compile_model(build(new_session=False)).device_executor
    finally:
        leave.set()
        thread.join()
    assert isinstance(placed["worker"], IPUExecutor) and placed["main"] is None
