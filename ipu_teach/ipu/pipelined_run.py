"""A pipelined executable's timing and memory, costed by the BSP Engine like every other program.

Each stage's forward, backward and weight update are its lowered steps run through the Engine on one IPU
(:class:`~ipu_teach.schedules.timing.StageCosts`, for the schedule's picture and the explorer); one
execution is the whole pipelined program (:func:`.programs.pipelined_program`) run through the Engine on
the pipeline's IPUs, so the time reported and the profile's execution are the same program.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import bsp, schedules
from . import programs as execution_programs
from .lowering import split_by_stage
from .synthetic_data import NO_SYNTHETIC_DATA


@dataclass
class PipelinedRun:
    """A pipelined executable: its schedule, the Engine's timeline of one execution, one lowered graph per
    stage, and the stages' costs (from the Engine) timed as a schedule for pictures."""

    schedule: object
    timeline: object
    """The schedule timed from the stages' costs (``schedules.timing``), for the explorer and Gantt charts."""
    stage_graphs: list
    execution: bsp.Timeline
    """The Engine's timeline of one execution of the pipelined program: what the profile shows."""
    costs: object = None
    activation_bytes: tuple = ()
    """Per stage, what one micro-batch's forward leaves for the backward pass (bytes)."""
    input_bytes: tuple = ()
    """Per stage, one micro-batch's input: the batch from the host, then what the previous stage sends."""

    @property
    def seconds(self) -> float:
        """Simulated seconds of one execution on the device (the Engine's, host overhead not included)."""
        return self.execution.seconds()

    @classmethod
    def build(
        cls,
        graph,
        plan,
        spe,
        accumulation,
        replicas,
        buffer_bytes=0,
        synthetic=NO_SYNTHETIC_DATA,
        samples_per_second=None,
        call_seconds=0.0,
    ):
        """The run of ``plan``'s pipeline, its host's input pipeline making ``samples_per_second`` (None: keeping
        up) while the device runs and the host calls the execution (``call_seconds``); a late host makes every
        micro-batch wait before its infeed (:func:`.programs.late_host_waits`)."""
        spec = graph.spec
        training = graph.mode == "train"
        micro_batches = accumulation if training else spe
        schedule = schedules.make_schedule(
            plan.schedule.name, plan.stages, micro_batches, training=training, device_mapping=plan.device_mapping
        )
        recompute = plan.recompute and training
        # RecomputeAndBackpropagateInterleaved with checkpoints: the backward steps recompute segment by segment
        # (:mod:`.recomputation`), so the stage's whole forward is not run again before them
        interleaved = any(step.phase == "recompute" for step in graph.backward)
        programs = execution_programs.stage_programs(graph, plan.stage_of_layer, plan.stages)
        actions = execution_programs.action_programs(programs, plan.stages, recompute and not interleaved)

        def seconds(*phases):  # one stage's steps of ``phases`` run through the Engine on one IPU, per stage
            return [
                bsp.CostEngine(bsp.Sequence([p for phase in phases for p in programs[phase][s]]), spec).run().seconds()
                for s in range(plan.stages)
            ]

        transfer = execution_programs.stage_transfer_bytes(graph, plan.stage_of_layer, plan.stages)
        costs = schedules.StageCosts(
            seconds("forward"),
            seconds("backward", "accumulate"),  # a recomputed forward is added by the schedule's timing
            seconds("update") if training else None,
            transfer,
            spec.neighbour_bytes_per_s,
            spec.ipu_link_latency_s,
            bsp.SyncKind.CROSS_IPU.cycles(spec) / spec.clock_hz,
        )
        timeline = schedules.time_schedule(schedule, costs, recompute=recompute and not interleaved)
        runs = spe // micro_batches

        reduce = (
            execution_programs.stage_all_reduce(
                graph, plan.stage_of_layer, plan.device_mapping, schedule.ipus, replicas, buffer_bytes
            )
            if replicas > 1 and training
            else None
        )

        def program(host_waits=()):
            return execution_programs.pipelined_program(
                graph, schedule, actions, transfer, runs, reduce, synthetic, host_waits
            )

        waits = execution_programs.late_host_waits(
            program(), graph, schedule.ipus, runs * micro_batches, replicas, synthetic, samples_per_second, call_seconds
        )
        execution = bsp.CostEngine(program(waits), spec, ipus=schedule.ipus).run()
        stash = [int(n) for n in schedules.peak_stash(schedule)] if training else [1] * plan.stages
        inputs = [graph.input_bytes] + transfer
        stage_graphs = split_by_stage(
            graph, plan.stage_of_layer, [1] * plan.stages if recompute else stash, stash if recompute else None, inputs
        )
        per_batch = [
            sum(int(m.per_tile.sum()) for m in g.memory if m.category == "activations")
            for g in split_by_stage(graph, plan.stage_of_layer, [1] * plan.stages)
        ]
        return cls(schedule, timeline, stage_graphs, execution, costs, tuple(per_batch), tuple(inputs))
