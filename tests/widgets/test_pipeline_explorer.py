"""The pipeline explorer's drawn data follows its controls (no browser needed)."""

import numpy as np
import pytest

from ipu_teach import schedules
from ipu_teach.widgets.figure_widget import caption_html
from ipu_teach.widgets.pipeline import (
    GANTT_GID,
    SCHEDULES,
    STASH_GID,
    UTILISATION_GID,
    PipelineExplorer,
    StashSizes,
    draw_pipeline,
    schedule_summary,
)

pytest.importorskip("ipywidgets")


def boxes(figure, kind):
    """The Gantt boxes of one kind (F / B / WU) that the figure really drew."""
    collections = [c for ax in figure.axes for c in ax.collections if c.get_gid() == f"pipeline-{kind}"]
    return sum(len(c.get_paths()) for c in collections)


def bars(figure, gid):
    """The lengths of the per-IPU bars drawn in the panel ``gid``, IPU 0 first."""
    (ax,) = [ax for ax in figure.axes if ax.get_gid() == gid]
    return [patch.get_width() for patch in ax.patches]


def test_more_micro_batches_draw_more_boxes_and_change_the_caption():
    explorer = PipelineExplorer(stages=4, accumulation=8)
    before = (boxes(explorer.figure, "F"), explorer.caption.value, explorer.image.value)
    explorer.accumulation.value = 16
    assert boxes(explorer.figure, "F") == 4 * 16 and before[0] == 4 * 8
    assert boxes(explorer.figure, "WU") == 4
    assert "16 micro-batches" in explorer.caption.value and explorer.caption.value != before[1]
    assert explorer.image.value != before[2]


def test_more_stages_draw_more_ipu_rows_and_bars():
    explorer = PipelineExplorer(schedule="Interleaved", stages=2, accumulation=12)
    assert len(bars(explorer.figure, STASH_GID)) == 2
    explorer.stages.value = 4
    assert len(bars(explorer.figure, UTILISATION_GID)) == len(bars(explorer.figure, STASH_GID)) == 4
    assert "IPU 3: busy" in explorer.caption.value


def test_changing_the_schedule_changes_the_timing_as_the_schedules_predict():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=16, ratio=2.0)
    grouped = explorer.view.metrics.total_seconds
    explorer.schedule.value = "Interleaved"
    interleaved = explorer.view.metrics.total_seconds
    explorer.schedule.value = "Sequential"
    sequential = explorer.view.metrics.total_seconds
    assert grouped < interleaved < sequential
    # one stage at a time: every pass in turn, and then every stage's weight update in turn
    assert sequential == pytest.approx(16 * 4 * (1 + 2) + 4 * 1)


def test_the_utilisation_bars_show_each_ipus_busy_fraction():
    explorer = PipelineExplorer(schedule="Interleaved", stages=3, accumulation=6, ratio=1.0)
    equal = bars(explorer.figure, UTILISATION_GID)
    assert equal == pytest.approx(list(explorer.view.metrics.utilisation_per_ipu))
    explorer.ratio.value = 3.0  # forwards now wait for the slower backwards in every lock-step slot
    assert max(bars(explorer.figure, UTILISATION_GID)) < min(equal)


def test_each_bars_number_stays_inside_its_panel():
    figure, _ = draw_pipeline("Grouped", stages=1, accumulation=64)  # one IPU busy 100% of the time
    figure.canvas.draw()
    for gid in (UTILISATION_GID, STASH_GID):
        (ax,) = [ax for ax in figure.axes if ax.get_gid() == gid]
        frame = ax.get_window_extent()
        for text in ax.texts:
            box = text.get_window_extent()
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1, f"{gid}: {text.get_text()!r} leaves its panel"
    (busy,) = [ax for ax in figure.axes if ax.get_gid() == UTILISATION_GID]
    assert [(t.get_text().strip(), t.get_color()) for t in busy.texts] == [("100%", "white")]


def test_the_stash_bars_follow_the_schedule():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=16)
    assert bars(explorer.figure, STASH_GID) == [8, 6, 4, 2]  # stage 0 waits longest for its backwards
    explorer.schedule.value = "Interleaved"
    assert bars(explorer.figure, STASH_GID) == [4, 3, 2, 1]  # backwards run as soon as they can
    explorer.schedule.value = "GPipe"
    assert bars(explorer.figure, STASH_GID) == [16] * 4  # every forward before any backward


def test_recomputation_costs_a_forward_per_backward_and_stashes_only_the_stage_inputs():
    explorer = PipelineExplorer(schedule="Sequential", stages=2, accumulation=4, ratio=2.0)
    plain_time, plain_stash = explorer.view.metrics.total_seconds, bars(explorer.figure, STASH_GID)
    explorer.recompute.value = True
    assert explorer.view.metrics.total_seconds == pytest.approx(plain_time + 2 * 4 * 1.0)
    share = StashSizes.in_activation_units(2).inputs[0]
    assert bars(explorer.figure, STASH_GID) == pytest.approx([s * share for s in plain_stash])
    assert "recomputation" in explorer.caption.value


def test_the_accumulation_slider_steps_through_the_counts_the_schedule_allows():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=16)
    slider = explorer.accumulation
    assert (slider.min, slider.step, slider.max) == (8, 8, 64)  # Grouped: multiples of 2 x stages
    explorer.schedule.value = "Interleaved"
    assert (slider.min, slider.step, slider.max, slider.value) == (4, 4, 64, 16)  # multiples of the stages
    explorer.stages.value = 3
    assert (slider.min, slider.step, slider.max, slider.value) == (3, 3, 63, 15)
    assert (
        "accumulation 16 is not allowed: Interleaved on 3 stages needs a multiple of 3; moved to the nearest, 15"
        in (explorer.caption.value)
    )
    assert "15 micro-batches" in explorer.caption.value and boxes(explorer.figure, "F") == 3 * 15
    explorer.schedule.value = "1F1B"  # no rule: every count, and the learner's 16 is back
    assert (slider.min, slider.step, slider.max, slider.value) == (1, 1, 64, 16)
    assert "not allowed" not in explorer.caption.value


def test_the_learners_count_comes_back_when_the_schedule_allows_it_again():
    explorer = PipelineExplorer(schedule="Interleaved", stages=4, accumulation=16)
    first = explorer.caption.value
    explorer.stages.value = 5
    assert explorer.accumulation.value == 15 and "accumulation 16 is not allowed" in explorer.caption.value
    explorer.stages.value = 4
    assert explorer.accumulation.value == 16 and explorer.caption.value == first
    explorer.stages.value = 5
    explorer.accumulation.value = 25  # the learner's new choice replaces the old one
    explorer.stages.value = 4
    assert explorer.accumulation.value == 24 and "accumulation 25 is not allowed" in explorer.caption.value


def test_a_count_the_schedule_forbids_moves_to_the_nearest_allowed_one_and_says_so():
    explorer = PipelineExplorer(schedule="Grouped", stages=4, accumulation=8)
    explorer.accumulation.value = 12  # halfway between 8 and 16: the larger
    assert explorer.accumulation.value == 16 and explorer.view.error == ""
    assert "accumulation 12 is not allowed: Grouped on 4 stages needs a multiple of 8" in explorer.caption.value
    assert boxes(explorer.figure, "F") == 4 * 16
    explorer.accumulation.value = 11
    assert explorer.accumulation.value == 8 and "moved to the nearest, 8" in explorer.caption.value
    explorer.ratio.value = 3.0  # still not the count the learner asked for: still said
    assert "accumulation 11 is not allowed" in explorer.caption.value
    explorer.accumulation.value = 16  # an allowed count: nothing to say
    assert "not allowed" not in explorer.caption.value
    started = PipelineExplorer(schedule="Grouped", stages=2, accumulation=6)
    assert started.accumulation.value == 8 and "accumulation 6 is not allowed" in started.caption.value


def test_a_forbidden_combination_still_gives_graphcores_rule_outside_the_explorer():
    figure, view = draw_pipeline("Grouped", stages=4, accumulation=12)
    assert "multiple of 8" in view.error and view.timeline is None and boxes(figure, "F") == 0
    assert any("multiple of 8" in text.get_text() for ax in figure.axes for text in ax.texts)


def test_the_slider_reaches_a_starting_count_beyond_its_usual_end():
    explorer = PipelineExplorer(schedule="Interleaved", stages=2, accumulation=96)
    assert explorer.accumulation.value == 96 and explorer.accumulation.max == 96


def test_the_explorer_says_what_each_schedule_is():
    explorer = PipelineExplorer(schedule="Grouped", stages=2, accumulation=8)
    summaries = {}
    for name in SCHEDULES:
        explorer.schedule.value = name
        summaries[name] = schedule_summary(name)
        assert caption_html(summaries[name]) in explorer.caption.value
    assert len(set(summaries.values())) == len(SCHEDULES)
    assert "1F1B with a longer warm-up" in summaries["Eager 1F1B"] and "twice" in summaries["Eager 1F1B"]
    assert all(len(text) < 300 for text in summaries.values())  # one sentence, not the whole entry


def test_the_comparison_schedules_have_no_accumulation_rule():
    figure, view = draw_pipeline("1F1B", stages=4, accumulation=6)
    assert view.error == "" and boxes(figure, "B") == 4 * 6


def test_the_plain_function_draws_what_the_widget_draws():
    figure, view = draw_pipeline("Interleaved", stages=3, accumulation=6, ratio=1.5)
    explorer = PipelineExplorer(schedule="Interleaved", stages=3, accumulation=6, ratio=1.5)
    assert boxes(figure, "B") == boxes(explorer.figure, "B") == 3 * 6
    assert view.metrics == explorer.view.metrics
    assert bars(figure, STASH_GID) == bars(explorer.figure, STASH_GID)
    assert [ax.get_gid() for ax in figure.axes] == [GANTT_GID, UTILISATION_GID, STASH_GID]
    schedules.validate(view.timeline.schedule)


def test_unknown_schedule_and_bad_input_share_are_clear_errors():
    with pytest.raises(ValueError, match="schedule must be one of"):
        PipelineExplorer(schedule="Zigzag")
    with pytest.raises(ValueError, match="input_share"):
        StashSizes.in_activation_units(2, input_share=0)


@pytest.fixture
def pipelined_model():
    """A 2-stage model trained pipelined, then evaluated (so the last executable is the inference one)."""
    import ipu_teach.keras as keras
    from ipu_teach import ipu

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()
    x, y = np.zeros((32, 8), np.float32), np.eye(2, dtype=np.float32)[np.zeros(32, int)]
    try:
        with ipu.ipu_strategy.IPUStrategy().scope():
            inputs = keras.Input(shape=(8,))
            with keras.ipu.PipelineStage(0):
                hidden = keras.layers.Dense(64, activation="relu")(inputs)
            with keras.ipu.PipelineStage(1):
                outputs = keras.layers.Dense(2, activation="softmax")(hidden)
            model = keras.Model(inputs, outputs)
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
            model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
            model.fit(x, y, batch_size=8, verbose=0)
            trained = model.get_ipu_executable("train").pipeline
            model.evaluate(x, y, batch_size=8, verbose=0)
        yield model, trained
    finally:
        ipu.system.reset()


def test_from_model_uses_the_trained_pipelines_real_stage_costs(pipelined_model):
    model, trained = pipelined_model
    explorer = PipelineExplorer.from_model(model)
    costs = trained.costs
    assert explorer.stages.value == 2 and explorer.stages.disabled and explorer.accumulation.value == 4
    assert explorer.costs.forward == pytest.approx(tuple(f * 1e6 for f in costs.forward))
    assert explorer.costs.backward == pytest.approx(tuple(b * 1e6 for b in costs.backward))
    assert all(b > 0 for b in explorer.costs.backward)  # the training costs, not the later evaluation's
    assert explorer.view.metrics.total_seconds == pytest.approx(trained.timeline.total * 1e6)
    assert "simulated us" in explorer.caption.value and "MB" in explorer.caption.value


def test_from_model_stashes_each_stages_real_activations(pipelined_model):
    model, trained = pipelined_model
    explorer = PipelineExplorer.from_model(model)
    sizes = explorer.sizes
    # the same bytes as the compiled stages hold: peak stash x one micro-batch's activations
    for stage_graph, stashed, per_batch in zip(
        trained.stage_graphs, schedules.peak_stash(trained.schedule), sizes.activations
    ):
        held = sum(int(m.per_tile.sum()) for m in stage_graph.memory if m.category == "activations")
        assert held == stashed * per_batch
    # stage 0 keeps the 64-wide hidden layer of 8 samples; stage 1 receives exactly that tensor
    assert sizes.activations[0] >= 8 * 64 * 4 and sizes.inputs[1] == 8 * 64 * 4
    plain = bars(explorer.figure, STASH_GID)
    assert plain == pytest.approx([n * a / 1e6 for n, a in zip(explorer.view.metrics.peak_stash, sizes.activations)])
    explorer.recompute.value = True
    assert bars(explorer.figure, STASH_GID)[0] < plain[0]


def test_from_model_refuses_a_model_that_is_not_pipelined():
    import ipu_teach.keras as keras

    with pytest.raises(ValueError, match="needs a pipelined model"):
        PipelineExplorer.from_model(keras.Sequential([keras.layers.Dense(2, input_shape=(3,))]))


def test_from_model_after_compiling_again_says_when_to_call_it(pipelined_model):
    model, _ = pipelined_model
    # a fresh executor (no fit yet), on the IPU the model was created for: it keeps its strategy out of the scope
    model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
    model.evaluate(
        np.zeros((32, 8), np.float32), np.eye(2, dtype=np.float32)[np.zeros(32, int)], batch_size=8, verbose=0
    )
    with pytest.raises(ValueError, match="call from_model after fit and before compiling the model again"):
        PipelineExplorer.from_model(model)


def test_the_unit_names_the_time_everywhere_it_is_shown():
    explorer = PipelineExplorer(stages=2, accumulation=4, unit="units")
    gantt = explorer.figure.axes[0]
    assert gantt.get_xlabel() == "time (units)" and "units, utilisation" in gantt.get_title()
    assert "simulated" not in gantt.get_title() and "units" in explorer.caption.value


def test_get_ipu_executable_keeps_each_modes_executable_and_says_what_is_missing(pipelined_model):
    model, trained = pipelined_model
    assert model.get_ipu_executable("train").pipeline is trained
    assert model.get_ipu_executable("test").pipeline.schedule.training is False
    with pytest.raises(ValueError, match=r"no 'predict' executable since it was last compiled: call predict first"):
        model.get_ipu_executable("predict")
    with pytest.raises(ValueError, match="mode must be one of 'train', 'test', 'predict'"):
        model.get_ipu_executable("fit")


def test_get_ipu_executable_of_a_model_not_compiled_for_the_ipu_says_how():
    import ipu_teach.keras as keras
    from ipu_teach import ipu  # noqa: F401  (installs the IPU methods)

    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.compile("sgd", "mse")
    with pytest.raises(
        ValueError, match="has not been compiled for the IPU: create it inside an IPUStrategy scope and compile it"
    ):
        model.get_ipu_executable()


def test_the_caption_counts_in_words_and_writes_long_times_without_an_exponent():
    explorer = PipelineExplorer(schedule="Sequential", stages=1, accumulation=1)
    assert "<br>Sequential: 1 stage, 1 micro-batch; total 4 units" in explorer.caption.value
    explorer.stages.value, explorer.accumulation.value, explorer.ratio.value = 8, 64, 4.0
    main = explorer.view.metrics.phases.main
    assert main > 1000 and f"main {float(f'{main:.3g}'):,.0f}, ramp-down" in explorer.caption.value
    assert "e+" not in explorer.caption.value
