"""One cost authority (issue 20): the BSP Engine counts every cycle. A pipelined run is the Engine's run of
its schedule (stages, transfers, host I/O and the slots' syncs), its profile shows that run, and a model is
lowered once per executable, not once per fit / evaluate."""

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model

import ipu_teach.keras as keras
from ipu_teach import bsp, hardware, ipu, profiling
from ipu_teach.examples import tutorial_model_fn
from ipu_teach.ipu import executor

MK2 = hardware.MK2
Schedule = ipu.ops.pipelining_ops.PipelineSchedule


def pipelined_tutorial(schedule=Schedule.Grouped, accumulation=4, spe=4, samples=64):
    configure(2)
    x = np.random.default_rng(0).random((samples, 28, 28, 1), np.float32)
    y = keras.utils.to_categorical(np.arange(samples) % 10, 10)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn(stages=True))
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=accumulation, pipeline_schedule=schedule)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=spe)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def engine_cycles(program, ipus=1):
    return bsp.CostEngine(program, MK2, ipus=ipus).run().total_cycles()


def pipeline_host_io(graph):
    """One micro-batch's infeed to the first stage's IPU and outfeed from the last's: host syncs of both IPUs."""
    streams = bsp.Sequence(bsp.HostToDevice([graph.input_bytes, 0]), bsp.DeviceToHost([0, graph.output_bytes]))
    return bsp.CostEngine(streams, MK2, ipus=2).run()


def host_call_seconds(ipus=2):
    """The host's call of one execution from Keras, its sync spanning ``ipus`` IPUs."""
    return bsp.CostEngine(bsp.HostCall("keras"), MK2, ipus=ipus).run().seconds()


def test_a_sequential_schedule_of_one_micro_batch_is_the_stages_the_transfers_and_the_host_io():
    executable = pipelined_tutorial(Schedule.Sequential, accumulation=1, spe=1, samples=16)
    run, graph = executable.pipeline, executable.graph
    # each stage's steps run through the Engine on its own IPU: forward, backward and weight update (the
    # loss's and the optimizer's own steps on the last stage)
    stage_of = {step.scope: i for i, g in enumerate(run.stage_graphs) for step in g.steps}
    last = len(run.stage_graphs) - 1
    stages = sum(
        engine_cycles(bsp.Sequence([s.program() for s in graph.steps if stage_of.get(s.scope, last) == i]))
        for i in range(last + 1)
    )
    [sent] = run.costs.transfer_bytes  # the activations forward, their gradient back: once each way
    link = engine_cycles(bsp.IPULinkCopy(int(sent), links=MK2.links_between_neighbours), ipus=2)
    host_io = pipeline_host_io(graph).total_cycles()
    slots = run.schedule.slots  # one action per slot, each slot closed by a sync of the two IPUs
    expected = stages + 2 * link + host_io + slots * MK2.sync_cycles_cross_ipu
    assert executable.timeline.total_cycles() == expected
    assert executable.seconds_per_execution == pytest.approx(host_call_seconds() + expected / MK2.clock_hz, rel=1e-12)
    # the schedule's picture is timed from the same Engine costs of the stages
    costs = run.costs
    assert sum(costs.forward) + sum(costs.backward) + sum(costs.weight_update) == pytest.approx(stages / MK2.clock_hz)


@pytest.mark.parametrize("schedule", list(Schedule))
def test_the_schedules_timing_is_the_engines_run_of_the_pipeline(schedule):
    executable = pipelined_tutorial(schedule, accumulation=8, spe=16, samples=256)
    run, graph = executable.pipeline, executable.graph
    host_io = pipeline_host_io(graph)
    runs, micro_batches = 16 // 8, run.schedule.micro_batches
    # the schedule's picture (pipeline.timing, from the Engine's stage costs and the slots' syncs) is the
    # Engine's run of the pipelined program, to the Engine's rounding of each transfer up to whole cycles
    t = executable.timeline
    transfers = sum(int(t.counts[r]) for r, kind in enumerate(t.kinds) if kind == "ipu-link")
    expected = runs * (run.timeline.total + micro_batches * host_io.seconds())
    assert transfers > 0
    assert expected <= t.seconds() <= expected + 2 * transfers / MK2.clock_hz


def test_a_pipelined_profile_shows_the_pipelined_execution(tmp_path):
    with profiling.auto_report(tmp_path):
        executable = pipelined_tutorial()
    report = profiling.open_report(profiling.last_report_path())
    run = executable.pipeline
    assert report.execution is not None and executable.timeline is run.execution
    assert executable.timeline.ipus == 2 == report.compilation.target.numIPUs
    seconds = executable.seconds_per_execution - host_call_seconds()
    assert seconds == pytest.approx(executable.timeline.seconds(), rel=1e-12)
    # every stage's ops compute on their own IPU only, as many times as the schedule runs them
    computing = {}
    for step in report.execution.steps:
        busy = [i.ipu for i in step.ipus if i.computeCycles]
        if busy and step.name.split("/")[0] in ("conv2d", "dense"):
            computing[step.name] = (busy, step.count)
    forwards = run.schedule.micro_batches  # one execution is one weight update of 4 micro-batches
    assert computing["conv2d/Conv2D:0"] == ([0], forwards)
    assert computing["dense/MatMul:8"][0] == [1]
    assert {busy[0] for busy, _ in computing.values()} == {0, 1}
    # the slots' syncs and the transfers between the stages are in it too
    kinds = {step.kind for step in report.execution.steps}
    assert {"compute", "sync", "ipu-link", "host->device", "device->host"} <= kinds


def test_the_schedules_still_cost_what_their_shapes_predict():
    totals = {s: pipelined_tutorial(s, accumulation=8, spe=8, samples=128).timeline.total_cycles() for s in Schedule}
    assert totals[Schedule.Grouped] < totals[Schedule.Sequential]
    assert totals[Schedule.Interleaved] < totals[Schedule.Sequential]


def test_a_model_is_lowered_once_per_executable(monkeypatch):
    lowered = []
    lower = executor.lower

    def counting_lower(model, mode, *args, **kwargs):
        lowered.append(mode)
        return lower(model, mode, *args, **kwargs)

    monkeypatch.setattr(executor, "lower", counting_lower)
    x, y = data(64)
    configure(1)
    model = ipu_model(steps_per_execution=2)
    model.fit(x, y, batch_size=8, epochs=3, validation_data=(x, y), verbose=0)
    model.evaluate(x, y, batch_size=8, verbose=0)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    assert sorted(lowered) == ["test", "train"]
    assert model.device_executor.lowerings == 2
    # what changes the program still makes a new one: another batch size
    model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    assert sorted(lowered) == ["test", "train", "train"]


def _explained(executable):
    """The op table's rows (as token lists) and the time parts' cycles, read from explain()'s text."""
    lines = executable.explain().splitlines()
    blank = lines.index("")
    rows = [line.split() for line in lines[2:blank]]
    parts = {}
    for line in lines[blank + 3 :]:
        tokens = line.split()
        if tokens[-5].replace(",", "").isdigit():  # cycles, per execution, "us", per step, "us"
            parts[line[:74].strip()] = int(tokens[-5].replace(",", ""))
    return lines, rows, parts


def test_explain_gives_each_lowered_op_and_where_the_time_comes_from():
    x, y = data(64)
    configure(2)
    model = ipu_model(steps_per_execution=4)
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    executable = model.get_ipu_executable("train")
    graph, timeline = executable.graph, executable.timeline
    lines, rows, parts = _explained(executable)
    assert [f"{r[0]}/{r[1]}" for r in rows] == [s.name for s in graph.steps]
    for row, step in zip(rows, graph.steps):
        layer, op, phase, flops, unit, tiles, runs, cycles, received, temporary = row
        assert (phase, int(flops.replace(",", ""))) == (step.phase, step.flops)
        assert unit == ("exchange" if not step.cycles.any() else "AMP" if step.temporary is not None else "vector")
        assert int(received.replace(",", "")) == step.received.sum()
        r = timeline.labels.index(step.name)
        assert int(runs) == timeline.counts[r] and int(cycles.replace(",", "")) == timeline.counts[r] * (
            timeline.compute[r, 0] + timeline.sync[r, 0] + timeline.exchange[r, 0]
        )
    ops = sum(int(r[7].replace(",", "")) for r in rows)
    compute_sets = sum(v for k, v in parts.items() if k.startswith("compute sets"))
    assert ops == compute_sets  # every compute set's cycles belong to one op
    device = parts.pop("the device in all")
    assert sum(parts.values()) == device == timeline.total_cycles()
    assert parts["IPU-Link copies (all-reduce, pipeline stage transfers) and their syncs"] > 0  # 2 replicas
    total = lines[-2].split()
    assert total[-4] == f"{executable.seconds_per_execution * 1e6:,.1f}"
    assert total[-2] == f"{executable.seconds_per_execution * 1e6 / 4:,.1f}"  # 4 steps per execution


def test_the_trace_of_a_pipelined_run_shows_both_ipus_computing_at_once():
    from ipu_teach.bsp import trace

    executable = pipelined_tutorial(Schedule.Grouped, accumulation=4, spe=4)
    events = [e for e in trace.chrome_trace_events(executable.timeline) if e["ph"] == "X"]
    spans = {
        ipu: [(e["ts"], e["ts"] + e["dur"]) for e in events if e["pid"] == ipu and e["cat"] == "compute"]
        for ipu in (0, 1)
    }
    overlap = sum(
        max(0.0, min(end0, end1) - max(start0, start1)) for start0, end0 in spans[0] for start1, end1 in spans[1]
    )
    assert spans[0] and spans[1] and overlap > 0  # the stages run on their IPUs at the same time
    # and both IPUs' traces end with the execution: the slots' syncs keep the IPUs in step
    ends = [max(e["ts"] + e["dur"] for e in events if e["pid"] == ipu) for ipu in (0, 1)]
    assert ends[0] == pytest.approx(ends[1]) == pytest.approx(executable.timeline.seconds() * 1e6)


def test_every_step_of_a_pipelined_program_belongs_to_exactly_one_stage_updates_included():
    """The stages' graphs (their memory, code and compile time) hold every step of the program once: forward,
    backward and each weight's update on the IPU of the weight's stage."""
    executable = pipelined_tutorial()
    graph, stage_graphs = executable.graph, executable.pipeline.stage_graphs
    names = [step.name for g in stage_graphs for step in g.steps]
    assert sorted(names) == sorted(step.name for step in graph.steps)
    for s, stage_graph in enumerate(stage_graphs):
        assert stage_graph.update, f"stage {s} updates its own weights"
        layers = {step.scope for step in stage_graph.forward}
        assert all(step.scope in layers for step in stage_graph.update if step.scope not in ("loss", "optimizer"))
