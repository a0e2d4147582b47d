"""The BSP programs of one execution: what the Engine runs, and so the only place its time is counted.

A program that is not pipelined loops ``steps_per_execution`` steps, each taking its batch from the
infeed and giving its results to the outfeed, with the gradients' all-reduce and the weight update after
every ``accumulation`` steps. A pipelined program runs its schedule slot by slot: in each slot every IPU
runs its stages' actions (``bsp.Parallel``), the IPUs synchronise, and the activations (forward) and
gradients (backward) cross to the neighbouring stage over IPU-Links; the micro-batches' infeed and outfeed
are host syncs that every IPU of the pipeline waits for. Either kind waits for a late host before each
micro-batch's infeed when the simulated input pipeline (:mod:`.host`) makes batches more slowly than the
device runs them. (Graphcore's ``PipelineSchedule`` docstring,
graphcore/tensorflow ``tensorflow/python/ipu/ops/pipelining_ops.py``: Grouped runs the forward passes of
the IPUs together, and a schedule is faster when "different IPUs don't spend so much time waiting for each
other": the IPUs wait for each other at the end of each step of the schedule.)
"""

from __future__ import annotations

import numpy as np

from .. import bsp
from ..schedules.actions import BACKWARD, FORWARD, WEIGHT_UPDATE
from . import host
from .synthetic_data import NO_SYNTHETIC_DATA

PHASES = ("forward", "backward", "accumulate", "update")


def host_streams(graph, synthetic=NO_SYNTHETIC_DATA) -> tuple:
    """One step's infeed and outfeed (host syncs and transfers), without those TF_POPLAR_FLAGS made synthetic
    and those with nothing to stream (a custom loop's step that enqueues nothing has no outfeed)."""
    return (
        () if synthetic.infeed or not graph.input_bytes else (bsp.HostToDevice(graph.input_bytes, label="infeed"),),
        () if synthetic.outfeed or not graph.output_bytes else (bsp.DeviceToHost(graph.output_bytes, label="outfeed"),),
    )


def with_results(graph, program) -> bsp.Program:
    """``program`` followed by the stream of what the execution returns to the host once (a custom loop's
    return value), if it returns anything."""
    if not graph.result_bytes:
        return program
    return bsp.Sequence([program, bsp.DeviceToHost(graph.result_bytes, label="results")], label="execution")


def gradient_groups(gradient_bytes, buffer_bytes) -> list:
    """The gradients' sizes grouped as TensorFlow's cross-replica-sum buffer groups them: a gradient joins
    the waiting group unless that would take the group past ``buffer_bytes`` (0: every gradient alone)."""
    groups = []
    for nbytes in gradient_bytes:
        if groups and sum(groups[-1]) + nbytes <= buffer_bytes:
            groups[-1].append(nbytes)
        else:
            groups.append([nbytes])
    return [sum(group) for group in groups]


def all_reduce(graph, replicas, buffer_bytes=0) -> bsp.Program:
    """The gradients' all-reduce over ``replicas`` replicas: one ring all-reduce per group of gradients
    (:func:`gradient_groups`), each 2(n-1) steps moving 1/n of its bytes to the next IPU over the IPU-Link
    between neighbours, each step paying the link's latency and a sync of the IPUs."""
    return _ring_all_reduce(graph.spec, [gradient_groups(graph.gradient_bytes, buffer_bytes)], replicas)


def stage_all_reduce(graph, stage_of_layer, device_mapping, ipus, replicas, buffer_bytes=0) -> bsp.Program:
    """The all-reduce of a replicated pipeline: each IPU reduces only the gradients of the stages it holds (ops
    outside every stage's layers count on the last stage) with the same IPU of the other replicas, every IPU's
    ring at once over its own links, so the step pays for the IPU with the most gradients, not the whole model."""
    last = len(device_mapping) - 1
    held = [[] for _ in range(ipus)]
    for nbytes, layer in zip(graph.gradient_bytes, graph.gradient_layers):
        held[device_mapping[stage_of_layer.get(layer, last)]].append(nbytes)
    return _ring_all_reduce(graph.spec, [gradient_groups(g, buffer_bytes) for g in held], replicas)


def _ring_all_reduce(spec, groups_per_ipu, replicas) -> bsp.Program:
    """Ring all-reduces over ``replicas``: the i-th group of every IPU's ``groups_per_ipu`` at once (an IPU with
    fewer groups sends nothing), 2(n-1) steps each moving 1/n of the group to the next replica's IPU. One list
    of groups is sent by every IPU the Engine runs (a replica of one IPU each); several, one per IPU."""
    rounds = max(len(groups) for groups in groups_per_ipu)
    sizes = [[groups[i] if i < len(groups) else 0 for groups in groups_per_ipu] for i in range(rounds)]
    return bsp.Sequence(
        [
            bsp.Repeat(
                2 * (replicas - 1),
                bsp.IPULinkCopy(
                    [bsp.ceil_div(n, replicas) for n in nbytes]
                    if len(nbytes) > 1
                    else bsp.ceil_div(nbytes[0], replicas),
                    links=spec.links_between_neighbours,
                    label=f"gradients/all-reduce:{i}",
                ),
                label="all-reduce",
            )
            for i, nbytes in enumerate(sizes)
        ],
        label="all-reduce",
    )


def late_host_waits(
    program, graph, ipus, micro_batches, replicas, synthetic, samples_per_second, call_seconds=0.0
) -> tuple:
    """The ``bsp.HostWait`` before each of ``program``'s ``micro_batches`` infeeds (on ``ipus`` IPUs) while the
    input pipeline makes every replica's micro-batch at ``samples_per_second`` (None: the host keeps up): what
    making them takes beyond the device's time per micro-batch and its share of the host's call of the execution
    (``call_seconds``: the pipeline works on while the framework calls), or nothing. Says so when the host is late."""
    if synthetic.infeed or samples_per_second is None:  # no batches to make, or a host that keeps up
        return ()
    samples = graph.micro_batch * replicas
    device_seconds = bsp.CostEngine(program, graph.spec, ipus=ipus).run().seconds()
    per_micro_batch = (device_seconds + call_seconds) / micro_batches
    waits = host.late_host_waits(samples, per_micro_batch, samples_per_second)
    host.tell_if_late(waits, samples, per_micro_batch)
    return waits


def execution_program(
    graph,
    spe,
    accumulation,
    replicas,
    buffer_bytes=0,
    synthetic=NO_SYNTHETIC_DATA,
    io_tiles=None,
    samples_per_second=None,
    call_seconds=0.0,
) -> bsp.Program:
    """One execution: ``spe`` steps, each taking its batch from the infeed and giving its results to
    the outfeed (host streams, as Keras' IPU loops do, or through I/O tiles while the previous step
    computes), with the gradient all-reduce and the weight update after every ``accumulation`` steps, then
    what the execution returns (a custom loop's results). Each
    step first waits for the host if its input pipeline (``samples_per_second``) makes the replicas' batches
    more slowly than the device runs a step (updates included) and the host calls it (``call_seconds`` per
    execution)."""
    compute = [s.program() for s in graph.forward + graph.backward]
    if io_tiles is not None and io_tiles.count:
        io_tiles.check_fits(graph.input_bytes + graph.output_bytes, graph.spec)
        step_seconds = bsp.CostEngine(bsp.Sequence(compute), graph.spec, ipus=replicas).run().seconds()
        infeed, outfeed = io_tiles.streams(
            graph, graph.spec, step_seconds, not synthetic.infeed, not synthetic.outfeed, replicas
        )
    else:
        infeed, outfeed = host_streams(graph, synthetic)
    micro = bsp.Sequence([*infeed, *compute, *outfeed], label="step")
    program = with_results(graph, _loop(graph, micro, spe, accumulation, replicas, buffer_bytes))
    waits = late_host_waits(program, graph, replicas, spe, replicas, synthetic, samples_per_second, call_seconds)
    if not waits:
        return program
    steps = _loop(graph, bsp.Sequence([*waits, micro], label="step"), spe, accumulation, replicas, buffer_bytes)
    return with_results(graph, steps)


def _loop(graph, micro, spe, accumulation, replicas, buffer_bytes) -> bsp.Program:
    """``spe`` runs of the step ``micro``, with the accumulation, all-reduce and weight update of training."""
    if graph.mode != "train":
        return bsp.Repeat(spe, micro, label="steps_per_execution")
    accumulate = [s.program() for s in graph.update if s.phase == "accumulate"]
    apply = [s.program() for s in graph.update if s.phase == "update"]
    body = [bsp.Repeat(accumulation, bsp.Sequence([micro] + accumulate), label="accumulation")]
    if replicas > 1:
        body.append(all_reduce(graph, replicas, buffer_bytes))
    return bsp.Repeat(spe // accumulation, bsp.Sequence(body + apply), label="steps_per_execution")


# ----- pipelines --------------------------------------------------------------------------------------


def stage_programs(graph, stage_of_layer, stages) -> dict:
    """``{phase: [programs of stage 0, of stage 1, ...]}``: each lowered step's program, made once so the
    Engine costs a step once however many slots run it (ops outside every stage's layers, the loss and
    the optimizer's, run on the last stage)."""
    programs = {phase: [[] for _ in range(stages)] for phase in PHASES}
    for step in graph.steps:  # a forward recomputed within the backward pass (:mod:`.recomputation`) is part of it
        phase = "backward" if step.phase == "recompute" else step.phase
        programs[phase][stage_of_layer.get(step.scope, stages - 1)].append(step.program())
    return programs


def action_programs(programs, stages, recompute) -> dict:
    """``{(kind, stage): program}`` of a pipeline's actions on one micro-batch: a forward, a backward
    (recomputing the forward first under recomputation, then accumulating the gradients) and the weight
    update."""
    actions = {}
    for s in range(stages):
        backward = (programs["forward"][s] if recompute else []) + programs["backward"][s] + programs["accumulate"][s]
        actions[FORWARD, s] = bsp.Sequence(programs["forward"][s], label=f"stage{s}/forward")
        actions[BACKWARD, s] = bsp.Sequence(backward, label=f"stage{s}/backward")
        actions[WEIGHT_UPDATE, s] = bsp.Sequence(programs["update"][s], label=f"stage{s}/update")
    return actions


def stage_transfer_bytes(graph, stage_of_layer, stages) -> list:
    """What stage s sends stage s + 1 for one micro-batch: the output of its last forward op (the
    gradient coming back has the same size)."""
    transfer = []
    for s in range(stages - 1):
        outputs = [step.output_bytes for step in graph.forward if stage_of_layer.get(step.scope, stages - 1) == s]
        transfer.append(outputs[-1] if outputs else 0)
    return transfer


def _one_ipu(nbytes, ipu, ipus) -> np.ndarray:
    """``nbytes`` for IPU ``ipu``, nothing for the others: a stream or copy only one IPU makes."""
    per_ipu = np.zeros(ipus, dtype=np.int64)
    per_ipu[ipu] = nbytes
    return per_ipu


def pipelined_program(
    graph,
    schedule,
    actions,
    transfer_bytes,
    runs,
    gradient_all_reduce=None,
    synthetic=NO_SYNTHETIC_DATA,
    host_waits=(),
) -> bsp.Program:
    """One execution of a lock-step pipeline on ``schedule.ipus`` IPUs: ``runs`` times its schedule.

    Each slot is a ``bsp.Parallel`` block (each IPU runs its actions of the slot in row order, then all
    synchronise), followed by an IPU-Link copy of what the slot's actions send their neighbouring stage (each
    IPU sends the largest it has). Micro-batch m's infeed is a host stream to stage 0's IPU before the slot of
    its first forward, its outfeed one from the last stage's IPU after the slot that finishes it; with
    replicas the gradients' all-reduce (``gradient_all_reduce``, from :func:`stage_all_reduce`) comes before the
    weight update. ``host_waits`` (``bsp.HostWait``, from
    :func:`late_host_waits`) come before every micro-batch's infeed: a late host holds every IPU of the pipeline.
    """
    if not schedule.lockstep:
        raise ValueError(f"pipelined_program: schedule {schedule.name!r} is not lock-step; Keras runs lock-step ones")
    spec, ipus, last = graph.spec, schedule.ipus, schedule.stages - 1
    mapping = schedule.device_mapping
    crossing = [mapping[s] != mapping[s + 1] for s in range(last)]
    infeed = (
        None if synthetic.infeed else bsp.HostToDevice(_one_ipu(graph.input_bytes, mapping[0], ipus), label="infeed")
    )
    outfeed = (
        None
        if synthetic.outfeed
        else bsp.DeviceToHost(_one_ipu(graph.output_bytes, mapping[last], ipus), label="outfeed")
    )
    finishing = BACKWARD if schedule.training else FORWARD
    body = []
    starts = np.searchsorted(schedule.slot, np.arange(schedule.slots + 1))  # rows are in slot order
    for slot in range(schedule.slots):
        rows = slice(starts[slot], starts[slot + 1])
        kinds, stages = schedule.kind[rows], schedule.stage[rows]
        if infeed is not None:
            body += [*host_waits, infeed] * int(np.count_nonzero((kinds == FORWARD) & (stages == 0)))
        if gradient_all_reduce is not None and schedule.training and (kinds == WEIGHT_UPDATE).any():
            body.append(gradient_all_reduce)
        per_ipu = [[] for _ in range(ipus)]
        sent = np.zeros(ipus, dtype=np.int64)
        for kind, stage in zip(kinds.tolist(), stages.tolist()):
            ipu = mapping[stage]
            per_ipu[ipu].append(actions[kind, stage])
            if kind == FORWARD and stage < last and crossing[stage]:
                sent[ipu] = max(sent[ipu], transfer_bytes[stage])
            if kind == BACKWARD and stage > 0 and crossing[stage - 1]:
                sent[ipu] = max(sent[ipu], transfer_bytes[stage - 1])
        body.append(bsp.Parallel([bsp.Sequence(p) for p in per_ipu], label=f"slot{slot}"))
        if sent.any():
            body.append(bsp.IPULinkCopy(sent, links=spec.links_between_neighbours, label=f"slot{slot}/stage transfers"))
        if outfeed is not None:
            body += [outfeed] * int(np.count_nonzero((kinds == finishing) & (stages == last)))
    return bsp.Repeat(runs, bsp.Sequence(body, label="pipeline"), label="steps_per_execution")
