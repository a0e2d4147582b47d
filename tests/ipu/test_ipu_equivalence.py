"""Numerics do not depend on the device, and follow Graphcore's gradient reduction exactly.

Under IPUStrategy each replica accumulates its k micro-batch gradients (SUM by default, or MEAN or
RUNNING_MEAN) and the replicas' results are SUMMED (``ipu.gradient_accumulation``). With plain SGD
(learning rate lr) and micro-batch b, one weight update therefore equals the CPU's update with batch
R*k*b and learning rate
    SUM:                 R*k*lr
    MEAN, RUNNING_MEAN:  R*lr
(the gradient of a batch's mean loss is the mean of its micro-batches' gradients). The tests check
each case to float tolerance, and that the wrong learning rate would be noticed."""

import numpy as np
import pytest
from helpers.models import LEARNING_RATE, compile_model
from ipu_test_helpers import CLASSES, FEATURES, assert_same_weights, configure, cpu_model, data, fit, ipu_model

import ipu_teach.keras as keras
from ipu_teach import ipu

MICRO_BATCH = 16
EQUIVALENT_RATE = {
    "sum": lambda replicas, k: replicas * k,
    "mean": lambda replicas, k: replicas,
    "running_mean": lambda replicas, k: replicas,
}


@pytest.mark.parametrize("replicas", [2, 4])
@pytest.mark.parametrize("shuffle", [False, True])
def test_replicas_of_batch_b_sum_their_gradients_like_the_cpu_with_batch_r_b_and_rate_r_lr(replicas, shuffle):
    x, y = data(256)
    configure(replicas)
    on_ipu = ipu_model()
    ipu_history = fit(on_ipu, x, y, MICRO_BATCH, epochs=2, shuffle=shuffle)
    on_cpu = cpu_model(learning_rate=LEARNING_RATE * replicas)
    cpu_history = fit(on_cpu, x, y, MICRO_BATCH * replicas, epochs=2, shuffle=shuffle)
    assert_same_weights(on_ipu, on_cpu)
    for name in ("loss", "accuracy"):
        np.testing.assert_allclose(ipu_history.history[name], cpu_history.history[name], rtol=1e-5)


@pytest.mark.parametrize("batch, rate", [(1, 2), (2, 1)], ids=["CPU batch b, rate 2 lr", "CPU batch 2b, rate lr"])
def test_the_replica_comparison_would_notice_a_different_batch_or_rate(batch, rate):
    """Guards the tests above and below: 2 replicas are neither the CPU's batch b nor the average of
    the replicas' gradients (batch 2b at rate lr, what ipu-teach did before it summed)."""
    x, y = data(256)
    configure(2)
    on_ipu = ipu_model()
    fit(on_ipu, x, y, MICRO_BATCH, epochs=2)
    on_cpu = cpu_model(learning_rate=LEARNING_RATE * rate)
    fit(on_cpu, x, y, MICRO_BATCH * batch, epochs=2)
    with pytest.raises(AssertionError):
        assert_same_weights(on_ipu, on_cpu)


@pytest.mark.parametrize("reduction", ["sum", "mean", "running_mean"])
@pytest.mark.parametrize("accumulation,replicas", [(2, 1), (4, 1), (2, 2)])
def test_gradient_accumulation_of_k_equals_the_cpu_with_batch_r_k_b_and_the_reductions_rate(
    reduction, accumulation, replicas
):
    x, y = data(256)
    configure(replicas)
    on_ipu = ipu_model(steps_per_execution=accumulation, accumulation=accumulation, reduction=reduction)
    ipu_history = fit(on_ipu, x, y, MICRO_BATCH, epochs=2, shuffle=True)
    on_cpu = cpu_model(learning_rate=LEARNING_RATE * EQUIVALENT_RATE[reduction](replicas, accumulation))
    cpu_history = fit(on_cpu, x, y, MICRO_BATCH * accumulation * replicas, epochs=2, shuffle=True)
    assert_same_weights(on_ipu, on_cpu)
    np.testing.assert_allclose(ipu_history.history["loss"], cpu_history.history["loss"], rtol=1e-5)


def test_sum_and_mean_accumulation_differ_by_exactly_the_factor_k_in_the_first_update():
    """One update of 4 micro-batches from the same weights: SUM moves the weights 4 times as far as MEAN."""
    x, y = data(64)
    configure(1)
    start = cpu_model().get_weights()
    moved = {}
    for reduction in ("sum", "mean"):
        model = ipu_model(steps_per_execution=4, accumulation=4, reduction=reduction)
        fit(model, x, y, MICRO_BATCH)
        moved[reduction] = [w - s for w, s in zip(model.get_weights(), start)]
    for total, mean in zip(moved["sum"], moved["mean"]):
        np.testing.assert_allclose(total, 4 * mean, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("steps_per_execution", [2, 4, 16])
def test_steps_per_execution_changes_nothing_numerically(steps_per_execution):
    x, y = data(256)
    configure(1)
    one_step = ipu_model(steps_per_execution=1)
    one_history = fit(one_step, x, y, MICRO_BATCH, epochs=2, shuffle=True)
    looped = ipu_model(steps_per_execution=steps_per_execution)
    looped_history = fit(looped, x, y, MICRO_BATCH, epochs=2, shuffle=True)
    on_cpu = cpu_model()
    cpu_history = fit(on_cpu, x, y, MICRO_BATCH, epochs=2, shuffle=True)
    assert_same_weights(looped, one_step, rtol=0, atol=0)
    assert_same_weights(looped, on_cpu)
    assert looped_history.history == one_history.history
    np.testing.assert_allclose(looped_history.history["accuracy"], cpu_history.history["accuracy"], rtol=1e-6)


@pytest.mark.parametrize("replicas", [1, 2])
def test_evaluate_and_predict_equal_the_cpu(replicas):
    x, y = data(256)
    configure(replicas)
    on_ipu = ipu_model(steps_per_execution=2)
    on_cpu = cpu_model()
    fit(on_cpu, x, y, 32, epochs=1)
    on_ipu.set_weights(on_cpu.get_weights())
    np.testing.assert_allclose(
        on_ipu.evaluate(x, y, batch_size=MICRO_BATCH, verbose=0),
        on_cpu.evaluate(x, y, batch_size=MICRO_BATCH, verbose=0),
        rtol=1e-6,
    )
    predicted = on_ipu.predict(x, batch_size=MICRO_BATCH, verbose=0)
    assert predicted.shape == (256, 3)
    np.testing.assert_allclose(predicted, on_cpu.predict(x, batch_size=MICRO_BATCH, verbose=0), rtol=1e-6)


def test_batches_left_over_by_the_replicas_are_dropped_not_trained_on():
    """15 batches on 2 replicas: 7 steps of 2 batches; the 15th batch never reaches the weights."""
    x, y = data(240)
    configure(2)
    on_ipu = ipu_model()
    fit(on_ipu, x, y, MICRO_BATCH)
    on_cpu = cpu_model(learning_rate=2 * LEARNING_RATE)
    fit(on_cpu, x[:224], y[:224], 2 * MICRO_BATCH)
    assert_same_weights(on_ipu, on_cpu)


def _dropout_model(seed=0):
    """Dropout draws its masks from the seeded generator: the replicas' masks must be the CPU's rows."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(FEATURES,))
    x = keras.layers.Dense(8, activation="relu")(inputs)
    x = keras.layers.Dropout(0.5)(x)
    return keras.Model(inputs, keras.layers.Dense(CLASSES, activation="softmax")(x))


@pytest.mark.parametrize("replicas,accumulation", [(2, None), (1, 2), (2, 2)])
def test_dropout_and_shuffling_train_like_the_cpu_too(replicas, accumulation):
    x, y = data(256)
    configure(replicas)
    with ipu.ipu_strategy.IPUStrategy().scope():
        on_ipu = _dropout_model()
        if accumulation:
            on_ipu.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=accumulation)
        compile_model(on_ipu, steps_per_execution=accumulation or 1)
    fit(on_ipu, x, y, MICRO_BATCH, epochs=2, shuffle=True)
    updates_summed = replicas * (accumulation or 1)  # the default reduction sums micro-batches and replicas
    on_cpu = compile_model(_dropout_model(), learning_rate=LEARNING_RATE * updates_summed)
    fit(on_cpu, x, y, MICRO_BATCH * updates_summed, epochs=2, shuffle=True)
    assert_same_weights(on_ipu, on_cpu)


def test_validation_between_epochs_keeps_training_with_accumulation_and_replicas():
    """fit's validation compiles an evaluation program; the next epoch must train with its own again."""
    x, y = data(256)
    configure(2)
    on_ipu = ipu_model(steps_per_execution=2, accumulation=2)
    keras.utils.set_random_seed(3)
    history = on_ipu.fit(
        x, y, batch_size=MICRO_BATCH, epochs=3, shuffle=False, verbose=0, validation_data=(x[:64], y[:64])
    )
    on_cpu = cpu_model(learning_rate=4 * LEARNING_RATE)  # 2 replicas x 2 micro-batches, summed
    keras.utils.set_random_seed(3)
    on_cpu.fit(x, y, batch_size=MICRO_BATCH * 4, epochs=3, shuffle=False, verbose=0, validation_data=(x[:64], y[:64]))
    assert_same_weights(on_ipu, on_cpu)
    assert len(history.history["val_loss"]) == 3


def _two_inputs_two_outputs(seed=0):
    """A functional model with two inputs and two outputs of different widths."""
    keras.utils.set_random_seed(seed)
    wide, narrow = keras.Input((FEATURES,)), keras.Input((2,))
    joined = keras.layers.Concatenate()([wide, narrow])
    outputs = [keras.layers.Dense(3, name="three")(joined), keras.layers.Dense(1, name="one")(joined)]
    return keras.Model([wide, narrow], outputs)


def test_a_model_of_several_inputs_and_outputs_of_different_shapes_runs_on_the_ipu_as_on_the_cpu():
    """Labels of different shapes per output and inputs of different widths (the program's cache key and its host
    streams took them for one array, and a list of inputs for a batch of two)."""
    x, _ = data(32)
    inputs = [x, x[:, :2] * 0.5]
    labels = [np.tile(x[:, :1], (1, 3)), x[:, 1:2]]
    cpu = _two_inputs_two_outputs()
    cpu.compile(keras.optimizers.SGD(LEARNING_RATE), ["mse", "mse"])
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        on_ipu = _two_inputs_two_outputs()
        on_ipu.compile(keras.optimizers.SGD(LEARNING_RATE), ["mse", "mse"], steps_per_execution=2)
    for model in (cpu, on_ipu):
        fit(model, inputs, labels, batch_size=8)
    assert_same_weights(cpu, on_ipu)
    graph = on_ipu.get_ipu_executable("train").graph
    assert graph.micro_batch == 8 and graph.input_bytes == 8 * (FEATURES + 2 + 3 + 1) * 4
    np.testing.assert_allclose(
        on_ipu.evaluate(inputs, labels, batch_size=8, verbose=0), cpu.evaluate(inputs, labels, batch_size=8, verbose=0)
    )
    for got, want in zip(on_ipu.predict(inputs, batch_size=8, verbose=0), cpu.predict(inputs, batch_size=8, verbose=0)):
        np.testing.assert_allclose(got, want, rtol=1e-6)
