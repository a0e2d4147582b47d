"""Chrome-trace export and the Gantt chart follow their inputs."""

import json

import matplotlib
import numpy as np
import pytest

from ipu_teach import schedules

matplotlib.use("Agg")


def _timeline(name="grouped", stages=2, micro_batches=4, **kwargs):
    return schedules.time_schedule(
        schedules.make_schedule(name, stages, micro_batches, **kwargs),
        schedules.StageCosts.uniform(stages, 1e-3, 2e-3, weight_update=5e-4),
    )


def test_chrome_trace_round_trips_through_a_file(tmp_path):
    timelines = [_timeline(), _timeline("interleaved")]
    path = schedules.write_chrome_trace(tmp_path / "trace.json", timelines)
    loaded = json.loads(open(path, encoding="utf-8").read())
    assert loaded == json.loads(json.dumps(schedules.chrome_trace(timelines)))
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]  # no temporary file left behind
    slices = [event for event in loaded["traceEvents"] if event["ph"] == "X"]
    assert len(slices) == sum(len(timeline.schedule) for timeline in timelines)
    first = next(event for event in slices if event["pid"] == 1 and event["name"] == "B0" and event["tid"] == 0)
    timeline = timelines[1]
    row = next(i for i, action in enumerate(timeline.schedule.actions()) if str(action) == "B0" and action.ipu == 0)
    assert first["ts"] == pytest.approx(timeline.start[row] * 1e6) and first["dur"] == pytest.approx(2e3)
    names = {event["args"]["name"] for event in loaded["traceEvents"] if event["ph"] == "M"}
    assert {"IPU 0", "IPU 1"} <= names and any("simulated" in name for name in names)


def _drawn_boxes(figure):
    collections = [c for c in figure.axes[0].collections if (c.get_gid() or "").startswith("pipeline-")]
    return {c.get_gid(): len(c.get_paths()) for c in collections}


def test_figure_draws_one_box_per_action_and_more_micro_batches_draw_more():
    small, large = _timeline(micro_batches=4), _timeline(micro_batches=8)
    assert _drawn_boxes(schedules.plot_schedule(small)) == {"pipeline-F": 8, "pipeline-B": 8, "pipeline-WU": 2}
    assert _drawn_boxes(schedules.plot_schedule(large)) == {"pipeline-F": 16, "pipeline-B": 16, "pipeline-WU": 2}
    inference = schedules.plot_schedule(_timeline(training=False))
    assert _drawn_boxes(inference) == {"pipeline-F": 8}


def test_drawn_boxes_match_the_timeline_and_carry_micro_batch_labels():
    timeline = _timeline("one_f_one_b", stages=2, micro_batches=4)
    boxes = schedules.gantt_boxes(timeline)
    assert [(box.start, box.start + box.width) for box in boxes] == list(zip(timeline.start, timeline.end))
    figure = schedules.plot_schedule(timeline)
    backward = next(c for c in figure.axes[0].collections if c.get_gid() == "pipeline-B")
    drawn = sorted(
        (
            path.vertices[:, 0].min(),
            path.vertices[:, 0].max(),
            np.ptp(path.vertices[:, 1]) / 2 + path.vertices[:, 1].min(),
        )
        for path in backward.get_paths()
    )
    expected = sorted(
        (box.start, box.start + box.width, box.ipu) for box in boxes if box.kind is schedules.Kind.BACKWARD
    )
    assert np.allclose(drawn, expected)
    texts = [text.get_text() for text in figure.axes[0].texts]
    assert sorted(t for t in texts if t.startswith("F")) == sorted(f"F{m}" for m in range(4) for _ in range(2))
    assert {"ramp-up", "main", "ramp-down"} <= set(texts)
    many = schedules.plot_schedule(timeline, label_limit=5)
    assert not any(t.startswith("F") for t in (text.get_text() for text in many.axes[0].texts))


def test_phases_are_shaded_where_the_metrics_put_them():
    timeline = _timeline(stages=2, micro_batches=8)
    spans = schedules.phases(timeline)
    figure = schedules.plot_schedule(timeline)
    shaded = {patch.get_gid(): patch.get_x() for patch in figure.axes[0].patches if patch.get_gid()}
    assert shaded["phase-ramp-up"] == pytest.approx(0.0)
    assert shaded["phase-ramp-down"] == pytest.approx(spans.main_end)


def test_the_chrome_trace_is_capped_and_says_so(tmp_path, capsys):
    schedule = schedules.make_schedule("Grouped", 2, 4096, training=True)
    timeline = schedules.time_schedule(schedule, schedules.StageCosts.uniform(2, forward=1.0, backward=2.0))
    path = schedules.write_chrome_trace(tmp_path / "trace.json", timeline, max_actions=1000)
    trace = json.loads(open(path).read())
    boxes = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    total = len(list(timeline.timed_actions()))
    assert len(boxes) == 1000 and trace["otherData"] == {
        "simulated": True,
        "actions_traced": 1000,
        "actions_total": total,
        "truncated": True,
    }
    assert f"first 1,000 of {total:,} actions" in trace["traceEvents"][0]["args"]["name"]
    assert f"the first 1,000 of {total:,} actions (cap max_actions=1,000)" in capsys.readouterr().out
    assert max(e["ts"] for e in boxes) < timeline.total * 1e6 / 2  # the first actions in time, not a sample


def test_the_time_axis_and_title_use_the_unit_given():
    timeline = _timeline()
    default = schedules.plot_schedule(timeline).axes[0]
    assert default.get_xlabel() == "time (simulated s)" and "simulated s," in default.get_title()
    units = schedules.plot_schedule(timeline, unit="units").axes[0]
    assert units.get_xlabel() == "time (units)" and f"{timeline.total:.3g} units," in units.get_title()
    assert "simulated" not in units.get_title()


def _labels(figure):
    return [text for text in figure.axes[0].texts if text.get_gid() == "pipeline-label"]


def test_labels_are_drawn_only_in_boxes_wide_enough_for_them():
    timeline = _timeline("one_f_one_b", stages=2, micro_batches=4)
    from matplotlib.figure import Figure

    wide, narrow = (Figure(figsize=(width, 2)).add_subplot() for width in (12, 0.8))
    assert len(_labels(schedules.plot_schedule(timeline, ax=wide))) == len(timeline.schedule)
    assert not _labels(schedules.plot_schedule(timeline, ax=narrow))  # 0.8 inches: "B0" would spill out
    many = _timeline("one_f_one_b", stages=2, micro_batches=16)  # "F10" no longer fits a forward box
    drawn = _labels(schedules.plot_schedule(many, ax=Figure(figsize=(12, 2)).add_subplot()))
    assert drawn and all(len(text.get_text()) >= 2 for text in drawn) and len(drawn) < len(many.schedule)


def test_a_box_thinner_than_its_white_edge_keeps_its_colour():
    from matplotlib.figure import Figure

    timeline = _timeline("sequential", stages=8, micro_batches=64)  # thousands of boxes across a chart
    ax = Figure(figsize=(8, 4)).add_subplot()
    figure = schedules.plot_schedule(timeline, ax=ax)
    points_per_second = ax.get_position().width * figure.get_figwidth() * 72 / timeline.total
    for collection in (c for c in ax.collections if (c.get_gid() or "").startswith("pipeline-")):
        widths = np.array([np.ptp(path.vertices[:, 0]) for path in collection.get_paths()]) * points_per_second
        edges = np.broadcast_to(collection.get_linewidths(), widths.shape)
        assert np.all(edges <= 0.2 * widths + 1e-9) and edges.max() <= 0.5
    wide = schedules.plot_schedule(_timeline(), ax=Figure(figsize=(12, 2)).add_subplot()).axes[0]
    assert {float(w) for c in wide.collections if c.get_gid() == "pipeline-F" for w in c.get_linewidths()} == {0.5}


def test_phase_names_too_wide_for_their_phase_stay_above_the_chart():
    from matplotlib.figure import Figure

    timeline = _timeline("sequential", stages=8, micro_batches=64)
    ax = Figure(figsize=(8, 4)).add_subplot()
    schedules.plot_schedule(timeline, ax=ax)
    names = {text.get_gid(): text for text in ax.texts if (text.get_gid() or "").startswith("phase-name-")}
    ramp_up, main, ramp_down = (names[f"phase-name-{n}"] for n in ("ramp-up", "main", "ramp-down"))
    assert (ramp_up.get_position()[0], ramp_up.get_horizontalalignment()) == (0.0, "left")
    assert (ramp_down.get_position()[0], ramp_down.get_horizontalalignment()) == (timeline.total, "right")
    assert main.get_horizontalalignment() == "center"
    roomy = schedules.plot_schedule(_timeline(micro_batches=8), ax=Figure(figsize=(12, 2)).add_subplot()).axes[0]
    assert {t.get_horizontalalignment() for t in roomy.texts if (t.get_gid() or "").startswith("phase-name-")} == {
        "center"
    }


def test_the_title_counts_in_words_and_writes_large_totals_without_an_exponent():
    one = schedules.plot_schedule(
        schedules.time_schedule(schedules.make_schedule("sequential", 1, 1), schedules.StageCosts.uniform(1, 1.0, 2.0)),
        unit="units",
    )
    assert "1 stage, 1 micro-batch, 3 units" in one.axes[0].get_title()
    long = schedules.time_schedule(
        schedules.make_schedule("sequential", 8, 64), schedules.StageCosts.uniform(8, 1.0, 4.0, weight_update=1.0)
    )
    assert f"{round(long.total, -1):,.0f} units" in schedules.plot_schedule(long, unit="units").axes[0].get_title()


def test_a_capped_chrome_trace_costs_memory_for_what_it_traces_not_for_the_whole_run():
    import tracemalloc

    schedule = schedules.make_schedule("Grouped", 2, 32_768, training=True)  # 131,074 actions
    timeline = schedules.time_schedule(schedule, schedules.StageCosts.uniform(2, forward=1.0, backward=2.0))
    tracemalloc.start()
    try:
        trace = schedules.chrome_trace(timeline, max_actions=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert trace["otherData"]["actions_traced"] == 100 and trace["otherData"]["actions_total"] == len(schedule)
    # sorting index of 8 bytes per action, not an object per action (about 40 MB before)
    assert peak < 24 * len(schedule), f"{peak:,} bytes traced for 100 of {len(schedule):,} actions"
