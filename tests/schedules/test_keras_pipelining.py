"""Pipelining a Keras model on the simulated IPU, as Graphcore's tutorial does: stage assignment, the
options, the rules and their errors, and numerics equal to gradient accumulation."""

import numpy as np
import pytest
from helpers.models import compile_model

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.schedules import PipelineScheduleError, peak_stash

Schedule = ipu.ops.pipelining_ops.PipelineSchedule
FEATURES, CLASSES, BATCH = 6, 3, 8


def data(n=256):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(n, FEATURES)).astype(np.float32)
    return x, keras.utils.to_categorical((x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5), CLASSES)


def configure(ipus, connection=None, allow_recompute=False):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = ipus
    config.allow_recompute = allow_recompute
    if connection is not None:
        config.device_connection.type = connection
    config.configure_ipu_system()


def two_stage_model(seed=0, dropout=True, stages=(0, 1)):
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(FEATURES,))
    with keras.ipu.PipelineStage(stages[0]):
        x = keras.layers.Dense(16, activation="relu")(inputs)
    with keras.ipu.PipelineStage(stages[1]):
        if dropout:
            x = keras.layers.Dropout(0.5)(x)
        x = keras.layers.Dense(CLASSES, activation="softmax")(x)
    return keras.Model(inputs, x)


def compiled(model, accumulation=8, steps_per_execution=8, schedule=Schedule.Grouped, learning_rate=0.1, **options):
    if accumulation:
        model.set_pipelining_options(
            gradient_accumulation_steps_per_replica=accumulation, pipeline_schedule=schedule, **options
        )
    return compile_model(model, steps_per_execution, learning_rate)


def pipelined(**kwargs):
    model_kwargs = {k: kwargs.pop(k) for k in ("seed", "dropout", "stages") if k in kwargs}
    with ipu.ipu_strategy.IPUStrategy().scope():
        return compiled(two_stage_model(**model_kwargs), **kwargs)


def test_pipelined_training_equals_gradient_accumulation_to_the_last_bit(capsys):
    x, y = data()
    configure(2)
    on_pipeline = pipelined()
    keras.utils.set_random_seed(3)
    on_pipeline.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
    assert "your effective batch size is 64" in capsys.readouterr().out
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        plain = two_stage_model()
        plain.reset_pipeline_stage_assignment()
        plain.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=8)
        compiled(plain, accumulation=None)
    keras.utils.set_random_seed(3)
    plain.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
    for a, b in zip(on_pipeline.get_weights(), plain.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("reduction, rate", [("sum", 8), ("mean", 1), ("running_mean", 1)])
def test_pipelined_training_matches_the_cpu_with_the_effective_batch_and_the_reductions_rate(reduction, rate):
    """8 micro-batches of b: 'sum' (the default) steps like the CPU with batch 8b at 8 times the learning
    rate; 'mean' and 'running_mean' like batch 8b at the same rate."""
    x, y = data()
    configure(2)
    on_pipeline = pipelined(dropout=False, gradient_accumulation_reduction_method=reduction)
    keras.utils.set_random_seed(3)
    on_pipeline.fit(x, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0)
    on_cpu = compiled(
        two_stage_model(dropout=False), accumulation=None, steps_per_execution=1, learning_rate=0.1 * rate
    )
    on_cpu.fit(x, y, batch_size=BATCH * 8, epochs=2, shuffle=False, verbose=0)
    for a, b in zip(on_pipeline.get_weights(), on_cpu.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_evaluate_and_predict_pipeline_too_and_equal_the_cpu():
    x, y = data(128)
    configure(2)
    model = pipelined(dropout=False, steps_per_execution=4)
    cpu = compiled(two_stage_model(dropout=False), accumulation=None, steps_per_execution=1)
    np.testing.assert_allclose(
        model.evaluate(x, y, batch_size=BATCH, verbose=0), cpu.evaluate(x, y, batch_size=BATCH, verbose=0), rtol=1e-6
    )
    np.testing.assert_allclose(
        model.predict(x, batch_size=BATCH, verbose=0), cpu.predict(x, batch_size=BATCH, verbose=0), rtol=1e-6
    )
    assert model.get_ipu_executable("predict").pipeline is not None


def test_ipus_beyond_one_pipeline_replicate_it(capsys):
    configure(8, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)
    model = pipelined()
    x, y = data(4 * BATCH * 8)
    model.fit(x, y, batch_size=BATCH, verbose=0)
    assert (
        "distributed across 4 replicas and accumulating 8 batches per optimizer step, your effective batch size is 256"
    ) in capsys.readouterr().out


def test_device_mapping_puts_both_stages_on_one_ipu_and_replicates_over_the_rest(capsys):
    configure(2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)
    model = pipelined(device_mapping=[0, 0])
    x, y = data(2 * BATCH * 8)
    model.fit(x, y, batch_size=BATCH, verbose=0)
    assert "distributed across 2 replicas" in capsys.readouterr().out


def test_schedules_cost_what_their_shapes_predict():
    x, y = data(BATCH * 8)
    totals = {}
    for schedule in (Schedule.Grouped, Schedule.Interleaved, Schedule.Sequential):
        configure(2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)
        model = pipelined(schedule=schedule)
        model.fit(x, y, batch_size=BATCH, verbose=0)
        totals[schedule] = model.get_ipu_executable("train").pipeline.timeline.total
    assert totals[Schedule.Grouped] < totals[Schedule.Sequential]
    assert totals[Schedule.Interleaved] < totals[Schedule.Sequential]


def test_recomputation_lowers_the_first_stages_memory():
    memory = {}
    for recompute in (False, True):
        configure(2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE, allow_recompute=recompute)
        with ipu.ipu_strategy.IPUStrategy().scope():
            inputs = keras.Input(shape=(28, 28, 1))
            with keras.ipu.PipelineStage(0):
                h = keras.layers.Conv2D(16, 3, activation="relu")(inputs)
            with keras.ipu.PipelineStage(1):
                h = keras.layers.Dense(CLASSES, activation="softmax")(keras.layers.Flatten()(h))
            model = compiled(keras.Model(inputs, h))
        model.fit(
            np.zeros((64, 28, 28, 1), np.float32),
            np.eye(CLASSES, dtype=np.float32)[np.zeros(64, int)],
            batch_size=BATCH,
            verbose=0,
        )
        memory[recompute] = model.get_ipu_executable("train").pipeline.stage_graphs[0].tile_memory().sum()
    assert memory[True] < memory[False]


def _activation_bytes(stage_graph):
    return sum(int(m.per_tile.sum()) for m in stage_graph.memory if m.category == "activations")


@pytest.mark.parametrize("recompute", [False, True])
def test_stage_memory_holds_the_stash_and_with_recomputation_the_stashed_inputs(recompute):
    configure(2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE, allow_recompute=recompute)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = compiled(two_stage_model(dropout=False))
    x, y = data(64)
    model.fit(x, y, batch_size=BATCH, verbose=0)
    run = model.get_ipu_executable("train").pipeline
    stash = [int(n) for n in peak_stash(run.schedule)]
    assert stash == [4, 2]  # Grouped: stage 0 runs 2 x 2 forwards before its first backward
    # one micro-batch: BATCH samples of FEATURES floats and labels from the host; 16 floats each to stage 1
    assert run.input_bytes == (BATCH * (FEATURES + CLASSES) * 4, BATCH * 16 * 4)
    for stage_graph, n, acts, inputs in zip(run.stage_graphs, stash, run.activation_bytes, run.input_bytes):
        kept = acts + n * inputs if recompute else n * acts  # recomputed from the stashed inputs: one batch live
        assert _activation_bytes(stage_graph) == kept


def test_pipeline_stage_below_zero_is_an_error():
    with pytest.raises(ValueError, match="integer >= 0"):
        keras.ipu.PipelineStage(-1)


def test_a_stage_given_at_call_time_wins_over_the_one_at_construction():
    inputs = keras.Input(shape=(FEATURES,))
    with keras.ipu.PipelineStage(0):
        first = keras.layers.Dense(4)
        second = keras.layers.Dense(CLASSES)
    h = first(inputs)
    with keras.ipu.PipelineStage(1):
        out = second(h)
    model = keras.Model(inputs, out)
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [0, 1]


def test_assignments_in_post_order_can_be_set_from_ints_or_the_objects_and_reset(capsys):
    model = two_stage_model(dropout=False, stages=(0, 0))
    assignment = model.get_pipeline_stage_assignment()
    assert [a.layer.name for a in assignment] == ["dense", "dense_1"]
    assignment[1].pipeline_stage = 1
    model.set_pipeline_stage_assignment(assignment)
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [0, 1]
    model.set_pipeline_stage_assignment([1, 1])
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [1, 1]
    with pytest.raises(ValueError, match="has 2 layer calls"):
        model.set_pipeline_stage_assignment([0, 1, 1])
    model.reset_pipeline_stage_assignment()
    model.print_pipeline_stage_assignment_summary()
    assert "unassigned" in capsys.readouterr().out


def test_sequential_models_take_one_stage_per_layer():
    model = keras.Sequential([keras.layers.Dense(4, input_shape=(FEATURES,)), keras.layers.Dense(CLASSES)])
    model.set_pipeline_stage_assignment([0, 1])
    assert [a.pipeline_stage for a in model.get_pipeline_stage_assignment()] == [0, 1]


@pytest.mark.parametrize(
    "schedule,accumulation,message",
    [
        (Schedule.Grouped, 6, r"multiple of 4 \(2 x 2 stages\), but it is 6"),
        (Schedule.Interleaved, 3, r"multiple of 2 \(2 stages\)|multiple of 2, but it is 3"),
    ],
)
def test_each_schedule_has_its_accumulation_rule(schedule, accumulation, message):
    configure(2)
    model = pipelined(schedule=schedule, accumulation=accumulation, steps_per_execution=accumulation * 2)
    x, y = data(BATCH * accumulation * 2)
    with pytest.raises(PipelineScheduleError, match=message):
        model.fit(x, y, batch_size=BATCH, verbose=0)


@pytest.mark.parametrize("accumulation", [1, 3])
def test_sequential_schedule_accepts_any_accumulation(accumulation):
    """Graphcore's Sequential schedule runs one stage at a time, so any count works, 1 (no accumulation) too."""
    configure(2, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)
    model = pipelined(schedule=Schedule.Sequential, accumulation=accumulation, steps_per_execution=3)
    x, y = data(BATCH * 3)
    model.fit(x, y, batch_size=BATCH, verbose=0)


def test_steps_per_execution_must_be_a_multiple_of_the_accumulation():
    configure(2)
    model = pipelined(accumulation=8, steps_per_execution=4)
    x, y = data(BATCH * 8)
    with pytest.raises(ValueError, match="must be a multiple of gradient_accumulation_steps_per_replica=8"):
        model.fit(x, y, batch_size=BATCH, verbose=0)


def test_pipelined_fit_needs_gradient_accumulation():
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = compiled(two_stage_model(), accumulation=None)
    x, y = data(BATCH * 8)
    with pytest.raises(
        ValueError,
        match="set_pipelining_options\\(gradient_accumulation_steps_per_replica=16\\) "
        "\\(a multiple of 4 for the Grouped schedule, of 2 for Interleaved; the "
        "Sequential schedule takes any count, 1 included\\)",
    ):
        model.fit(x, y, batch_size=BATCH, verbose=0)


def test_stages_missing_out_of_order_or_more_than_the_ipus_are_errors():
    configure(2)
    x, y = data(BATCH * 8)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = two_stage_model(dropout=False)
        model.set_pipeline_stage_assignment([0, None])
        compiled(model)
    with pytest.raises(ValueError, match="Pipeline stages missing: layer\\(s\\) dense_1"):
        model.fit(x, y, batch_size=BATCH, verbose=0)
    model.set_pipeline_stage_assignment([1, 0])
    with pytest.raises(ValueError, match="out of order"):
        model.fit(x, y, batch_size=BATCH, verbose=0)
    model.set_pipeline_stage_assignment([0, 2])
    with pytest.raises(ValueError, match="no layer is in stage\\(s\\) \\[1\\]"):
        model.fit(x, y, batch_size=BATCH, verbose=0)
    configure(1)
    model.set_pipeline_stage_assignment([0, 1])
    with pytest.raises(ValueError, match="needs 2 IPUs .* only 1 are selected"):
        model.fit(x, y, batch_size=BATCH, verbose=0)


def test_an_inference_steps_per_execution_must_keep_the_schedules_rule():
    configure(2)
    model = pipelined(steps_per_execution=3)
    x, y = data(BATCH * 3)
    with pytest.raises(PipelineScheduleError, match="steps_per_execution"):
        model.evaluate(x, y, batch_size=BATCH, verbose=0)
