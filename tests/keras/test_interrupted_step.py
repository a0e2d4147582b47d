"""Ctrl-C (Jupyter's "interrupt kernel") during a training step leaves the model as before the step or as
after it, never torn. A real SIGINT is sent at one line of the step after another (the k-th line run, for
every k): each time the weights, the optimizer's slots and step count, the loss scale and BatchNormalization's
moving statistics must all equal their values before the step or all equal those after it, and the
KeyboardInterrupt must still reach the caller."""

import contextlib
import inspect
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from keras_helpers import tiny_classification

import ipu_teach
import ipu_teach.keras as keras
from ipu_teach import autograd, ipu
from ipu_teach.autograd import function, precision
from ipu_teach.keras.engine import device
from ipu_teach.keras.layers import normalization


def bn_model(features=4, classes=3):
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(features,))
    hidden = keras.layers.BatchNormalization()(keras.layers.Dense(5, activation="relu")(inputs))
    return keras.Model(inputs, keras.layers.Dense(classes, activation="softmax")(hidden))


def _optimizers(model):
    outer = model.optimizer
    return outer, getattr(outer, "inner_optimizer", outer)


def state(model) -> dict:
    outer, inner = _optimizers(model)
    return {
        "weights": [w.data.copy() for w in model.weights],
        "slots": {key: value.copy() for key, value in inner._slots.items()},
        "iterations": inner.iterations,
        "loss_scale": (getattr(outer, "loss_scale", None), getattr(outer, "dynamic_counter", None)),
    }


def restore(model, saved) -> None:
    outer, inner = _optimizers(model)
    for weight, value in zip(model.weights, saved["weights"], strict=True):
        weight.data = value.copy()
    inner._slots = {key: value.copy() for key, value in saved["slots"].items()}
    inner.iterations = saved["iterations"]
    if saved["loss_scale"][0] is not None:
        outer.loss_scale, outer.dynamic_counter = saved["loss_scale"]


def same(a, b) -> bool:
    def equal(x, y):
        return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)

    return (
        a["iterations"] == b["iterations"]
        and a["loss_scale"] == b["loss_scale"]
        and a["slots"].keys() == b["slots"].keys()
        and all(equal(a["slots"][key], b["slots"][key]) for key in a["slots"])
        and all(equal(x, y) for x, y in zip(a["weights"], b["weights"], strict=True))
    )


PACKAGE = str(Path(ipu_teach.__file__).parent)


def ours_or_contextlib(frame) -> bool:
    """ipu-teach's own lines (and contextlib's, which enter and leave its contexts): not numpy's internals, nor
    a test tool's garbage-collector callback, where Python drops any exception ("Exception ignored in")."""
    return frame.f_code.co_filename.startswith(PACKAGE) or frame.f_code.co_filename == contextlib.__file__


def outside_generators_and_handlers(frame) -> bool:
    return ours_or_contextlib(frame) and not frame.f_code.co_flags & inspect.CO_GENERATOR and sys.exc_info()[1] is None


def sigint_at_line(k, run, counted=outside_generators_and_handlers):
    """Runs ``run()`` sending SIGINT to this process when the k-th line (in any function it calls, of the frames
    ``counted`` accepts) is about to run. Returns (whether the SIGINT was sent, whether ``run`` ended in
    KeyboardInterrupt).

    Generators (the context managers that push and pop autograd's name scopes, no_grad...) and exception
    handlers (numpy's, contextlib's) are not interrupted: a line event comes before a ``finally``'s pop, where
    CPython delivers no signal, and an exception raised by a trace function inside an ``except`` leaves the
    thread's handled exception behind; either would spill into the next tests. No model state is written there."""
    lines = [0]

    def tracer(frame, event, arg):
        if event == "line" and counted(frame):
            lines[0] += 1
            if lines[0] == k:
                signal.raise_signal(signal.SIGINT)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        run()
    except KeyboardInterrupt:
        return lines[0] >= k, True
    finally:
        sys.settrace(previous)
    return lines[0] >= k, False


@pytest.fixture
def python_sigint_handler():
    """Ctrl-C as in a Python process or a Jupyter kernel: SIGINT raises KeyboardInterrupt (whatever the test
    runner set)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def assert_never_torn(model, run, every=1) -> int:
    """Sends SIGINT at line k = 1, 1 + every, ... of ``run()`` until it runs to its end; returns that k
    (more than the lines ``run`` runs)."""
    before = state(model)
    run()
    after = state(model)
    assert not same(before, after), "the step changed nothing: nothing to tear"
    k = 1
    while True:
        restore(model, before)
        sent, interrupted = sigint_at_line(k, run)
        now = state(model)
        assert same(now, before) or same(now, after), f"torn by a SIGINT at line {k} of the step"
        assert sent == interrupted, f"SIGINT at line {k}: {'lost' if sent else 'raised without one'}"
        if not sent:
            return k
        k += every


def test_an_interrupted_training_step_leaves_the_model_all_old_or_all_new(python_sigint_handler):
    """The issue's case (Adam: torn in 11 of 12 trials), with moving statistics updated by the forward pass."""
    model = bn_model()
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    x, y = tiny_classification(8)
    model.train_on_batch(x, y)  # slots exist: an interrupt could leave some at step 1 and some at step 2
    trials = assert_never_torn(model, lambda: model.train_batch(x, y))
    assert trials > 1000  # every line of the forward, backward and update was interrupted once


@pytest.mark.parametrize(
    "optimizer",
    [
        keras.optimizers.SGD(0.1),
        keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
        keras.optimizers.Adam(0.01),
        keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
        keras.optimizers.Adagrad(0.1),
    ],
    ids=["SGD", "SGD-nesterov", "Adam", "RMSprop-centered-momentum", "Adagrad"],
)
def test_every_optimizer_writes_its_step_whole(optimizer, python_sigint_handler):
    model = bn_model()
    model.compile(optimizer, "sparse_categorical_crossentropy")
    model.train_on_batch(*tiny_classification(8))
    grads = [np.full(w.shape, 0.5, np.float32) for w in model.trainable_weights]
    assert assert_never_torn(model, lambda: model.apply_gradients(grads)) > 50


@pytest.mark.parametrize("gradient", [1.0, np.inf], ids=["applied", "skipped"])
def test_an_interrupted_step_with_loss_scaling_keeps_the_scale_with_its_step(gradient, python_sigint_handler):
    """Dynamic loss scaling changes the scale and its counter with the step (skipped or applied), never apart."""
    optimizer = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam(0.01), dynamic_growth_steps=2)
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer, "mse")
    model.weights[0].data = np.ones((3, 1), np.float16)  # an fp16 weight: updated in fp32, written in fp16
    grads = [np.full((3, 1), gradient, np.float32), np.ones(1, np.float32)]
    optimizer.apply_gradients(zip([np.ones((3, 1), np.float32), grads[1]], model.weights))
    assert assert_never_torn(model, lambda: model.apply_gradients(grads)) > 50
    assert model.weights[0].dtype == np.float16


def test_an_interrupted_step_on_the_ipu_with_replicas_and_accumulation_is_never_torn(python_sigint_handler):
    """Each weight update of an execution (2 replicas x 2 accumulated batches) is all or nothing, with the
    moving statistics of its global batch."""
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = bn_model()
        model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=2)
        model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy", steps_per_execution=2)
    x, y = tiny_classification(8)
    model.fit(x, y, batch_size=2, verbose=0)
    batches = [(x[i : i + 2], y[i : i + 2]) for i in range(0, 8, 2)]
    trials = assert_never_torn(model, lambda: model.device_executor.run(model, "train", batches), every=9)
    assert trials > 1000


def test_a_step_in_another_thread_leaves_the_sigint_handler_alone():
    """Only the main thread receives signals (and may set their handlers): a step elsewhere just writes."""
    model = bn_model()
    model.compile("adam", "sparse_categorical_crossentropy")
    x, y = tiny_classification(8)
    handler, errors = signal.getsignal(signal.SIGINT), []

    def train():
        try:
            model.fit(x, y, batch_size=4, verbose=0)
        except Exception as error:  # reported below: an exception in a thread is otherwise only printed
            errors.append(error)

    thread = threading.Thread(target=train)
    thread.start()
    thread.join()
    assert errors == [] and model.optimizer.iterations == 2
    assert signal.getsignal(signal.SIGINT) is handler


@pytest.mark.parametrize(
    "enter, left",
    [
        (lambda: ipu.ipu_strategy.IPUStrategy().scope(), lambda: device.current() is None),
        (normalization.pooled_moving_statistics, lambda: normalization._pools == []),
        (autograd.no_grad, autograd.is_grad_enabled),
        (lambda: function.scope("dense"), lambda: function._scopes == [""]),
        (function.record, lambda: function._recorders == []),
        (lambda: precision.autocast("float16"), lambda: precision.compute_dtype() is None),
        (
            lambda: precision.ipu_numerics("half", "half", np.random.default_rng(0)),
            lambda: precision._partials == {"matmul": "float", "conv": "float"} and precision._rounding == [None],
        ),
    ],
    ids=["IPUStrategy.scope", "pooled_moving_statistics", "no_grad", "scope", "record", "autocast", "ipu_numerics"],
)
def test_ctrl_c_while_entering_a_context_leaves_nothing_open(enter, left, python_sigint_handler):
    """A SIGINT at each line run while entering (before the body): afterwards nothing of the context is left
    open. A scope left open would place later models on the IPU; a pool left open would swallow every
    BatchNormalization's statistics, its moving averages never updated again; no_grad left open would make
    every later fit compute no gradient, silently; the others would rename, record or round later ops."""
    body_reached = []

    def run():
        with enter():
            body_reached.append(True)

    k = 0
    while True:
        k += 1
        body_reached.clear()
        sent, interrupted = sigint_at_line(k, run, counted=lambda frame: not body_reached and ours_or_contextlib(frame))
        assert left(), f"a SIGINT at line {k} of entering left it open"
        assert sent == interrupted
        if not sent:
            assert k > 5
            return
