"""The pipeline explorer's drawn data follows its controls (no browser needed)."""
import pytest

from ipu_teach import pipeline
from ipu_teach.widgets.pipeline import PipelineExplorer, draw_pipeline

pytest.importorskip("ipywidgets")


def boxes(figure, kind):
    """The Gantt boxes of one kind (F / B / WU) that the figure really drew."""
    collections = [c for ax in figure.axes for c in ax.collections if c.get_gid() == f"pipeline-{kind}"]
    return sum(len(c.get_paths()) for c in collections)


def test_more_micro_batches_draw_more_boxes_and_change_the_caption():
    explorer = PipelineExplorer(stages=4, accumulation=8)
    before = (boxes(explorer.figure, "F"), explorer.caption.value, explorer.image.value)
    explorer.accumulation.value = 16
    assert boxes(explorer.figure, "F") == 4 * 16 and before[0] == 4 * 8
    assert "16 micro-batches" in explorer.caption.value and explorer.caption.value != before[1]
    assert explorer.image.value != before[2]


def test_changing_the_schedule_changes_the_timing_as_the_schedules_predict():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=16, ratio=2.0)
    grouped = explorer.view.metrics.total_seconds
    explorer.schedule.value = "Interleaved"
    interleaved = explorer.view.metrics.total_seconds
    explorer.schedule.value = "Sequential"
    sequential = explorer.view.metrics.total_seconds
    assert grouped < interleaved < sequential
    assert sequential == pytest.approx(16 * 4 * (1 + 2))  # one stage at a time: every pass in turn


def test_recomputation_adds_a_forward_pass_before_each_backward():
    explorer = PipelineExplorer(schedule="Sequential", stages=2, accumulation=4, ratio=2.0)
    plain = explorer.view.metrics.total_seconds
    explorer.recompute.value = True
    assert explorer.view.metrics.total_seconds == pytest.approx(plain + 2 * 4 * 1.0)


def test_a_forbidden_combination_shows_graphcores_rule_instead_of_a_chart():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=8)
    explorer.accumulation.value = 12
    assert "multiple of 8" in explorer.caption.value and explorer.view.timeline is None
    assert boxes(explorer.figure, "F") == 0


def test_the_plain_function_draws_what_the_widget_draws():
    figure, view = draw_pipeline("Interleaved", stages=3, accumulation=6, ratio=1.5)
    explorer = PipelineExplorer(schedule="Interleaved", stages=3, accumulation=6, ratio=1.5)
    assert boxes(figure, "B") == boxes(explorer.figure, "B") == 3 * 6
    assert view.metrics == explorer.view.metrics
    pipeline.validate(view.timeline.schedule)


def test_unknown_schedule_is_a_clear_error():
    with pytest.raises(ValueError, match="schedule must be one of"):
        PipelineExplorer(schedule="Zigzag")


def test_from_model_uses_the_compiled_pipelines_real_stage_costs():
    import numpy as np

    import ipu_teach.keras as keras
    from ipu_teach import ipu

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()
    try:
        with ipu.ipu_strategy.IPUStrategy().scope():
            inputs = keras.Input(shape=(8,))
            with keras.ipu.PipelineStage(0):
                x = keras.layers.Dense(64, activation="relu")(inputs)
            with keras.ipu.PipelineStage(1):
                x = keras.layers.Dense(2, activation="softmax")(x)
            model = keras.Model(inputs, x)
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
            model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        model.fit(np.zeros((32, 8), np.float32), np.eye(2, dtype=np.float32)[np.zeros(32, int)], batch_size=8, verbose=0)
        explorer = PipelineExplorer.from_model(model)
    finally:
        ipu.system.reset()
    costs = model.device_executor.executable.pipeline.costs
    assert explorer.stages.value == 2 and explorer.stages.disabled and explorer.accumulation.value == 4
    assert explorer.costs.forward == pytest.approx(tuple(f * 1e6 for f in costs.forward))
    assert "simulated us" in explorer.caption.value


def test_from_model_refuses_a_model_that_is_not_pipelined():
    import ipu_teach.keras as keras
    with pytest.raises(ValueError, match="needs a pipelined model"):
        PipelineExplorer.from_model(keras.Sequential([keras.layers.Dense(2, input_shape=(3,))]))
