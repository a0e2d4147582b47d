"""Running a Keras model on the simulated IPU: the rules, the executable, the numerics and the clock.

Numerics are the CPU's: each replica's micro-batch gradient is computed with numpy, each replica
accumulates its micro-batches with the model's reduction method and the replicas' results are
summed before one update, as Graphcore's Keras does (``gradient_accumulation``: R replicas of
batch b step like the CPU with batch R*b at R times the learning rate). Time is simulated: each
execution costs the host's call from its front end (``hardware.HostSpec``, a ``bsp.HostCall``) plus the BSP
Engine's cycles for streaming the batches in (waiting for the host when its simulated input pipeline is slower,
:mod:`.host`), looping ``steps_per_execution`` steps on the device, all-reducing gradients over IPU-Links and
updating the weights; the first run of an executable also pays its compile time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import bsp, hardware
from .. import pipeline as schedules
from ..autograd import precision
from ..keras.engine.training import Plan
from ..keras.layers.normalization import pooled_moving_statistics
from ..profiling import capture
from . import executable_cache, host, messages, out_of_memory, pipelining, poplar_options, preparation
from .gradient_accumulation import accumulate, cross_replica_sum
from .keras_extensions import options_of
from .lowering import lower, split_by_stage
from .preparation import IPURuleError
from .synthetic_data import NO_SYNTHETIC_DATA, SyntheticData


@dataclass
class Executable:
    """One compiled program: its lowering, the Engine's timeline of one execution, its cost."""

    key: str
    graph: object
    timeline: object
    seconds_per_execution: float
    compile_seconds: float
    from_cache: bool
    pipeline: object = None
    out_of_memory: object = None
    """The ModelOutOfMemoryError of a program compiled with debug.allowOutOfMemory that does not fit."""
    synthetic: SyntheticData = NO_SYNTHETIC_DATA
    """Which host streams TF_POPLAR_FLAGS made synthetic when this program was compiled."""


@dataclass
class PipelinedRun:
    """A pipelined executable's timing and memory: the schedule of one weight update (or of one
    inference execution) timed from each stage's cost, and one lowered graph per stage."""

    schedule: object
    timeline: object
    stage_graphs: list
    seconds: float
    costs: object = None
    activation_bytes: tuple = ()
    """Per stage, what one micro-batch's forward leaves for the backward pass (bytes)."""
    input_bytes: tuple = ()
    """Per stage, one micro-batch's input: the batch from the host, then what the previous stage sends."""

    @classmethod
    def build(cls, graph, plan, spe, accumulation, replicas, buffer_bytes=0, synthetic=NO_SYNTHETIC_DATA):
        spec = graph.spec
        training = graph.mode == "train"
        micro_batches = accumulation if training else spe
        schedule = schedules.make_schedule(
            plan.schedule.name, plan.stages, micro_batches, training=training, device_mapping=plan.device_mapping
        )
        stage_of = {name: stage for name, stage in plan.stage_of_layer.items()}
        last = plan.stages - 1

        def seconds(phase, stage):
            cycles = sum(
                step.superstep_cycles(spec)
                for step in graph.steps
                if step.phase == phase and stage_of.get(step.scope, last) == stage
            )
            return cycles / spec.clock_hz

        # Host I/O is not a stage's work: the infeed and outfeed of every micro-batch are host syncs that
        # all the pipeline's IPUs wait for, so they are added to the schedule's time below.
        infeed, outfeed = host_streams(graph, synthetic)
        host_io = bsp.Engine(bsp.Sequence([*infeed, *outfeed]), spec).run().seconds()
        forward = [seconds("forward", s) for s in range(plan.stages)]
        backward = [seconds("backward", s) + seconds("accumulate", s) for s in range(plan.stages)]
        update = [seconds("update", s) for s in range(plan.stages)]
        transfer = []
        for s in range(last):
            outputs = [step.output_bytes for step in graph.forward if stage_of.get(step.scope, last) == s]
            transfer.append(outputs[-1] if outputs else 0)
        costs = schedules.StageCosts(
            forward,
            backward,
            update if training else None,
            transfer,
            spec.neighbour_bytes_per_s,
            spec.ipu_link_latency_s,
        )
        timeline = schedules.time_schedule(schedule, costs, recompute=plan.recompute and training)
        stash = [int(n) for n in schedules.peak_stash(schedule)] if training else [1] * plan.stages
        inputs = [graph.input_bytes] + transfer
        recompute = plan.recompute and training
        stage_graphs = split_by_stage(
            graph, plan.stage_of_layer, [1] * plan.stages if recompute else stash, stash if recompute else None, inputs
        )
        per_batch = [
            sum(int(m.per_tile.sum()) for m in g.memory if m.category == "activations")
            for g in split_by_stage(graph, plan.stage_of_layer, [1] * plan.stages)
        ]
        runs = spe // micro_batches
        if not synthetic.infeed:  # a late host makes every micro-batch wait before its infeed
            samples, per_micro_batch = graph.micro_batch * replicas, timeline.total / micro_batches + host_io
            waits = host.late_host_waits(samples, per_micro_batch)
            host.tell_if_late(waits, samples, per_micro_batch)
            host_io += bsp.Engine(bsp.Sequence(waits), spec).run().seconds()
        seconds_total = runs * (timeline.total + micro_batches * host_io)
        if training and replicas > 1:
            seconds_total += runs * _all_reduce_seconds(graph, spec, replicas, buffer_bytes)
        return cls(schedule, timeline, stage_graphs, seconds_total, costs, tuple(per_batch), tuple(inputs))


def host_streams(graph, synthetic=NO_SYNTHETIC_DATA) -> tuple:
    """One step's infeed and outfeed (host syncs and transfers), without those TF_POPLAR_FLAGS made synthetic."""
    return (
        () if synthetic.infeed else (bsp.HostToDevice(graph.input_bytes, label="infeed"),),
        () if synthetic.outfeed else (bsp.DeviceToHost(graph.output_bytes, label="outfeed"),),
    )


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
    return bsp.Sequence(
        [
            bsp.Repeat(
                2 * (replicas - 1),
                bsp.IPULinkCopy(
                    bsp.ceil_div(nbytes, replicas),
                    links=graph.spec.links_between_neighbours,
                    label=f"gradients/all-reduce:{i}",
                ),
                label="all-reduce",
            )
            for i, nbytes in enumerate(gradient_groups(graph.gradient_bytes, buffer_bytes))
        ],
        label="all-reduce",
    )


def _all_reduce_seconds(graph, spec, replicas, buffer_bytes):
    return bsp.Engine(all_reduce(graph, replicas, buffer_bytes), spec, ipus=replicas).run().seconds()


def _optimizer_structure(optimizer) -> dict:
    """What of the optimizer shapes the program: its kind and its switches (nesterov, centered...), not
    its hyperparameters. Graphcore's TensorFlow feeds the learning rate, momentum and the like to the
    compiled program as variables, so changing them does not recompile."""
    switches = {k: v for k, v in optimizer.get_config().items() if isinstance(v, bool)}
    return {"class": type(optimizer).__name__, "slots": optimizer.slots_per_weight, **switches}


class IPUExecutor:
    """Runs fit / evaluate / predict of one model on the IPUs the system configuration selected; ``host_api``
    names the front end that calls each execution (``hardware.HOST_APIS``), whose host cost per call differs."""

    time_note = "(simulated)"

    def __init__(self, model, host_api: str = "keras"):
        hardware.HOST.execution_seconds(host_api)  # names the APIs if this one is unknown
        self.model, self.host_api = model, host_api
        self.executables = {}
        self.configuration = None
        """The system configuration ``executables`` were compiled for."""
        self.replicas = 1
        self._compile_due = 0.0
        self.prepared = {}

    # ----- planning ------------------------------------------------------------------------------
    def prepare(self, model, mode, adapter) -> Plan:
        """Check the model and data against the IPU's rules (:mod:`.preparation`), say what Graphcore's
        Keras says, and compile (or reuse) the executable for ``mode``: the plan of the epoch loop."""
        configuration = preparation.configured_system()
        preparation.check_data_shape_known(adapter)
        if configuration != self.configuration:
            # a new configure_ipu_system detaches the IPUs: nothing compiled for the old system is reused
            self.executables.clear()
            self.configuration = configuration
        options = options_of(model)
        self.pipeline = plan = pipelining.plan_for(
            model, options.pipelining, configuration.num_ipus, configuration.allow_recompute
        )
        if mode == "train":
            pipelining.warn_unused(model, options.pipelining, plan, configuration.num_ipus)
        replicas, accumulation = preparation.replicas_and_accumulation(
            model, plan, configuration.num_ipus, mode, options
        )
        self.replicas, self.accumulation = replicas, accumulation
        self.reduction = options.gradient_accumulation_reduction_method
        batch = preparation.fixed_batch_size(adapter)
        spe, per_replica = preparation.steps_per_replica(model, adapter.steps, model.steps_per_execution, replicas)
        preparation.check_steps_per_execution(plan, mode, spe, accumulation)
        preparation.tell_effective_batch(mode, batch, replicas, accumulation)
        x, y = adapter.first_batch()
        self.connection, self._told_compile_only = configuration, False
        self.executable = self._compile(model, mode, x, y, configuration, spe, accumulation)
        # fit validates between epochs: each mode keeps its own executable and layout to return to
        self.prepared[mode] = (self.executable, replicas, accumulation, self.reduction, configuration)
        return Plan(
            steps_per_execution=spe,
            steps=per_replica,
            replicas=replicas,
            epoch_notice=preparation.epoch_notice(model, spe),
        )

    def _compile(self, model, mode, x, y, configuration, spe, accumulation) -> Executable:
        replicas, plan, io_tiles = self.replicas, self.pipeline, configuration.io_tiles
        if io_tiles.count and plan is not None:
            raise IPURuleError(
                f"`{model.name}` is pipelined and IPUConfig.io_tiles asks for {io_tiles.count} I/O tiles: "
                "ipu-teach simulates I/O tiles for programs that are not pipelined; set "
                "io_tiles.num_io_tiles = 0 for this model"
            )
        spec = io_tiles.compute_spec(configuration.spec)
        stage_options = options_of(model).pipelining if plan is not None else None
        graph = lower(
            model,
            mode,
            x,
            y,
            spec,
            accumulation=accumulation,
            replicas=replicas,
            options_for=poplar_options.options_for(configuration, plan, stage_options),
        )
        options = capture.engine_options(configuration)
        synthetic = SyntheticData.from_flags()
        pipelined = (
            None
            if plan is None
            else PipelinedRun.build(
                graph, plan, spe, accumulation, replicas, configuration.cross_replica_sum_buffer_bytes, synthetic
            )
        )
        overflow = next(
            filter(
                None,
                (
                    out_of_memory.find(model, stage_graph)
                    for stage_graph in ([graph] if pipelined is None else pipelined.stage_graphs)
                ),
            ),
            None,
        )
        if overflow is not None and not options.allow_out_of_memory:
            raise overflow
        description = {
            "graph": graph.signature,
            "mode": mode,
            "micro_batch": graph.micro_batch,
            "steps_per_execution": spe,
            "replicas": replicas,
            "accumulation": accumulation,
            "cross_replica_sum_buffer": configuration.cross_replica_sum_buffer_bytes if replicas > 1 else 0,
            "ipu": spec.name,
            "tiles": spec.tiles,
            "pipeline": None
            if plan is None
            else [
                plan.stages,
                list(plan.device_mapping),
                plan.schedule.name,
                plan.recompute,
                [plan.stage_of_layer.get(layer.name) for layer in model.layers],
            ],
            "optimizer": _optimizer_structure(model.optimizer) if mode == "train" else None,
            **poplar_options.describe(graph, configuration, stage_options),
        }
        if synthetic.active:
            description["synthetic_data"] = synthetic.describe()
        if io_tiles.count:
            description["io_tiles"] = [io_tiles.count, io_tiles.memory_proportion]
        if mode == "train" and accumulation > 1:  # compiled into the accumulation loop
            description["gradient_accumulation_reduction_method"] = self.reduction.name
        key = executable_cache.key_of(description)
        # the input pipeline's rate is the host's, not the program's: it changes the time, not the executable
        in_memory = (key, host.input_pipeline_rate())
        if in_memory in self.executables:
            return self.executables[in_memory]
        if pipelined is None:
            program = self._program(
                graph,
                spe,
                accumulation,
                replicas,
                configuration.cross_replica_sum_buffer_bytes,
                synthetic,
                io_tiles,
                tell_host_late=True,
            )
            timeline = bsp.Engine(program, spec, ipus=replicas).run()
            device_seconds = timeline.seconds()
        else:
            timeline = bsp.Engine(self._program(graph, 1, 1, 1, synthetic=synthetic), spec, ipus=1).run()
            device_seconds = pipelined.seconds
        call = bsp.Engine(host.execution_program(self.host_api), spec, ipus=configuration.num_ipus).run()
        compile_seconds = hardware.HOST.compile_seconds(graph.compute_sets)
        cached = executable_cache.load(key)
        due = hardware.HOST.executable_load_s if cached else compile_seconds
        if cached:
            messages.info(
                f"Loaded the executable of `{model.name}` ({mode}) from the executable cache "
                f"({executable_cache.cache_path()}): no compilation needed."
            )
        else:
            executable_cache.store(
                key,
                {
                    "model": model.name,
                    "mode": mode,
                    "compile_seconds": compile_seconds,
                    "compute_sets": graph.compute_sets,
                    "cycles_per_execution": timeline.total_cycles(),
                    "description": description,
                },
            )
        executable = Executable(
            key,
            graph,
            timeline,
            call.seconds() + device_seconds,
            compile_seconds,
            bool(cached),
            pipelined,
            overflow,
            synthetic,
        )
        if synthetic.active:
            synthetic.tell(model.name)
        self.executables[in_memory] = executable
        capture.on_compile(model, mode, executable, configuration, options)
        self._compile_due = due
        return executable

    @staticmethod
    def _program(
        graph,
        spe,
        accumulation,
        replicas,
        buffer_bytes=0,
        synthetic=NO_SYNTHETIC_DATA,
        io_tiles=None,
        tell_host_late=False,
    ):
        """One execution: ``spe`` steps, each taking its batch from the infeed and giving its results to
        the outfeed (host streams, as Keras' IPU loops do, or through I/O tiles while the previous step
        computes), with the gradient all-reduce and the weight update after every ``accumulation`` steps. Each step
        first waits for the host if the simulated input pipeline makes its batches more slowly than the device
        runs it (``tell_host_late``: say so)."""
        compute = [s.program() for s in graph.forward + graph.backward]
        if io_tiles is not None and io_tiles.count:
            io_tiles.check_fits(graph.input_bytes + graph.output_bytes, graph.spec)
            step_seconds = bsp.Engine(bsp.Sequence(compute), graph.spec, ipus=replicas).run().seconds()
            infeed, outfeed = io_tiles.streams(
                graph, graph.spec, step_seconds, not synthetic.infeed, not synthetic.outfeed, replicas
            )
        else:
            infeed, outfeed = host_streams(graph, synthetic)
        micro = bsp.Sequence([*infeed, *compute, *outfeed], label="step")
        program = IPUExecutor._loop(graph, micro, spe, accumulation, replicas, buffer_bytes)
        if synthetic.infeed:
            return program
        # the host makes every replica's batch while the device runs a step (updates included)
        samples, step_seconds = graph.micro_batch * replicas, bsp.Engine(program, graph.spec, replicas).run().seconds()
        waits = host.late_host_waits(samples, step_seconds / spe)
        if tell_host_late:
            host.tell_if_late(waits, samples, step_seconds / spe)
        if not waits:
            return program
        micro = bsp.Sequence([*waits, micro], label="step")
        return IPUExecutor._loop(graph, micro, spe, accumulation, replicas, buffer_bytes)

    @staticmethod
    def _loop(graph, micro, spe, accumulation, replicas, buffer_bytes):
        """``spe`` runs of the step ``micro``, with the accumulation, all-reduce and weight update of training."""
        if graph.mode != "train":
            return bsp.Repeat(spe, micro, label="steps_per_execution")
        accumulate = [s.program() for s in graph.update if s.phase == "accumulate"]
        apply = [s.program() for s in graph.update if s.phase == "update"]
        body = [bsp.Repeat(accumulation, bsp.Sequence([micro] + accumulate), label="accumulation")]
        if replicas > 1:
            body.append(all_reduce(graph, replicas, buffer_bytes))
        return bsp.Repeat(spe // accumulation, bsp.Sequence(body + apply), label="steps_per_execution")

    # ----- running -------------------------------------------------------------------------------
    def run(self, model, mode, batches):
        self.executable, self.replicas, self.accumulation, self.reduction, self.connection = self.prepared[mode]
        if self.executable.out_of_memory is not None and self.connection.runs:
            raise out_of_memory.CannotRunOutOfMemoryError(self.executable.out_of_memory)
        batch = self.executable.graph.micro_batch
        for x, _ in batches:
            if len(x) != batch:
                raise IPURuleError(
                    f"A batch of {len(x)} samples reached an IPU program compiled for batches of "
                    f"{batch}: use Dataset.batch({batch}, drop_remainder=True) or trim the data"
                )
        if self.executable.synthetic.infeed:
            batches = self._synthetic_batches(batches)
        if self.connection.runs:
            c = self.connection
            with precision.ipu_numerics(
                c.matmul_options.partials_type,
                c.conv_options.partials_type,
                c.rounding_rng if c.stochastic_rounding else None,
            ):
                results = getattr(self, f"_{mode}")(model, batches)
        else:
            results = self._compile_only(model, mode, batches)
        seconds = self.executable.seconds_per_execution * self.connection.runs + self._compile_due
        self._compile_due = 0.0
        return results, seconds

    def _synthetic_batches(self, batches):
        """The batches the IPU makes for itself under --use_synthetic_data (same shapes, not the dataset's)."""
        rng = np.random.default_rng(len(batches))
        synthetic = self.executable.synthetic
        return [synthetic.inputs((x, y), rng) for x, y in batches]

    def _compile_only(self, model, mode, batches):
        """PRE_COMPILE / NEVER: the program is compiled (and cached) but never runs, as on the real system."""
        if not self._told_compile_only:
            self._told_compile_only = True
            messages.info(
                f"device_connection.type is {self.connection.connection.name}: `{model.name}` was compiled "
                "but does not run; its weights do not change and its results are zeros."
            )
        if mode == "predict":
            return [np.zeros((len(x),) + tuple(model.output_shape[1:]), dtype=np.float32) for x, _ in batches]
        return [0.0] * len(batches)

    def _train(self, model, batches):
        """Each weight update takes ``replicas * accumulation`` batches: the infeed deals them to the
        replicas in turn (replica r gets batches r, r + R, ...); each replica accumulates its own,
        then the replicas' gradients are summed (``gradient_accumulation``)."""
        results, per_update = [], self.replicas * self.accumulation
        for start in range(0, len(batches), per_update):
            gradients = []
            with pooled_moving_statistics():  # one update of the moving statistics, from the global batch
                for x, y in batches[start : start + per_update]:
                    loss, grads, y_pred = model.compute_gradients(x, y)
                    model.update_metrics(loss, y, y_pred)
                    gradients.append(grads)
                    results.append(loss)
            model.apply_gradients(
                cross_replica_sum(
                    [accumulate(gradients[r :: self.replicas], self.reduction) for r in range(self.replicas)]
                )
            )
        return results

    def _test(self, model, batches):
        return [model.test_step(x, y) for x, y in batches]

    def _predict(self, model, batches):
        return [model.predict_step(x) for x, _ in batches]
