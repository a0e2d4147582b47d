"""Running a Keras model on the simulated IPU: the rules, the executable, the numerics and the clock.

Numerics are the CPU's: each replica's micro-batch gradient is computed with numpy, each replica
accumulates its micro-batches with the model's reduction method and the replicas' results are
summed before one update, as Graphcore's Keras does (``gradient_accumulation``: R replicas of
batch b step like the CPU with batch R*b at R times the learning rate). Time is simulated: each
execution costs the host's call from its front end (``hardware.HostSpec``, a ``bsp.HostCall``) plus the BSP
Engine's cycles for streaming the batches in (waiting for the host when its simulated input pipeline is slower,
:mod:`.host`), looping ``steps_per_execution`` steps on the device, all-reducing gradients over IPU-Links and
updating the weights; the first run of an executable also pays its compile time.

Three stages, each a function of what the previous one returns: :func:`prepare` checks the rules and decides
the :class:`Setup`; :func:`compile_executable` lowers the model for it and costs one execution with the
Engine (the programs are in :mod:`.programs`, a pipeline's in :mod:`.pipelined_run`); :func:`run` runs the
numerics and returns the simulated seconds. :class:`IPUExecutor` keeps a model's executables, looked up by
:meth:`Setup.cache_key` before anything is lowered.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace

import numpy as np

from .. import bsp, hardware
from ..autograd import precision
from ..keras.engine import atomic_step, global_batch, shape_only_weights, step_overrides
from ..keras.engine.training import ExecutionPlan, step_log
from ..profiling import capture
from . import (
    compile_time,
    executable_cache,
    host,
    messages,
    offloading,
    out_of_memory,
    pipelining,
    popart_program,
    poplar_log,
    poplar_options,
    preparation,
    recomputation,
)
from . import programs as execution_programs
from .gradient_accumulation import accumulate, cross_replica_sum
from .keras_extensions import callbacks_per_step, options_of
from .lowering import arrays_of, batch_size_of, lower
from .pipelined_run import PipelinedRun
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
    steps_per_execution: int = 1
    """The steps (micro-batches per replica) one execution runs."""

    def step_arrivals(self, seconds: float, runs: int = 1) -> list:
        """When each step's results reach the host's outfeed, in seconds from the start of an execution that took
        ``seconds``: the host's call (and a first run's compile) come first, then the device's steps, each an
        equal share of the Engine's timeline (``runs``: 0 when the program is compiled but never runs)."""
        step = self.timeline.seconds() * runs / self.steps_per_execution
        return [seconds - (self.steps_per_execution - 1 - j) * step for j in range(self.steps_per_execution)]

    def explain(self) -> str:
        """Returns one line per lowered op and where one execution's simulated time comes from.

        Each op's line gives its layer, op, phase, FLOPs, the unit that computes it (the AMP for a matrix
        product's main step, the vector units, or ``exchange`` for a step that only moves data), the tiles it
        uses, how many times it runs in one execution, its cycles there (superstep by superstep, as the BSP
        Engine costs it: compute, sync and exchange), the bytes its tiles receive by exchange and its
        temporary memory. Then the execution's time on its busiest IPU, split into compute, exchange and
        syncs of the compute sets, host streams, waits for a late host, IPU-Link copies, Streaming Memory copies
        (an offloaded optimizer state) and pipeline waits, plus
        the host's call of the execution from its front end: they add up to ``seconds_per_execution``.

        Example:

        >>> from ipu_teach.examples import trained_pipeline_model
        >>> model = trained_pipeline_model()
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> text = model.get_ipu_executable("train").explain()
        >>> print(text.splitlines()[0])
        train executable, micro-batch 4, on 2 IPU(s) of GC200 (Mk2), pipelined (Grouped); one execution, simulated
        >>> print(text.splitlines()[1])
        layer op phase FLOPs unit tiles runs cycles exchange B temporary B
        >>> print(next(line for line in text.splitlines() if "AMP" in line))
        dense MatMul:0 forward 256 AMP 8 4 2,492 0 576
        >>> print(text.splitlines()[-2])
        one execution (seconds_per_execution) 3,041.2 us 760.3 us
        """
        from .explain import explain

        return explain(self)


_listeners: list = []
"""The lists :func:`compiled_executables` blocks collect newly compiled executables into."""


@contextlib.contextmanager
def compiled_executables():
    """A block that collects ``(model name, mode, Executable)`` for each executable compiled inside it (in
    compile order), for ``ipu-teach explain``; executables reused from a model's own cache are not new.

    Example:

    >>> from ipu_teach.ipu import executor
    >>> from ipu_teach.examples import trained_pipeline_model
    >>> with executor.compiled_executables() as compiled:
    ...     model = trained_pipeline_model()
    INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
    >>> [(name, mode) for name, mode, _ in compiled]
    [('model', 'train')]
    """
    compiled = []
    _listeners.append(compiled)
    try:
        yield compiled
    finally:
        _listeners.remove(compiled)


def _optimizer_structure(optimizer) -> dict:
    """What of the optimizer shapes the program: its kind and its switches (nesterov, centered...), not
    its hyperparameters. Graphcore's TensorFlow feeds the learning rate, momentum and the like to the
    compiled program as variables, so changing them does not recompile."""
    config = optimizer.get_config()
    switches = {k: v for k, v in config.items() if isinstance(v, bool)}
    # gradient clipping adds its ops to the program (Keras 2.6 bakes the bound into the graph)
    clipping = [k for k in ("clipnorm", "clipvalue", "global_clipnorm") if config.get(k) is not None]
    return {
        "class": type(optimizer).__name__,
        "slots": optimizer.slots_per_weight,
        **switches,
        **({"clipping": {k: config[k] for k in clipping}} if clipping else {}),
    }


@dataclass(frozen=True, eq=False)
class Setup:
    """What ``prepare`` decided for one mode: the system, the pipeline, the replicas and the loops, and the
    micro-batch the program is lowered for. Everything ``compile`` and ``run`` need, passed explicitly."""

    mode: str
    configuration: object
    pipeline_plan: object
    """The PipelinePlan of a pipelined model, else None (the compiled run is ``Executable.pipeline``)."""
    replicas: int
    accumulation: int
    reduction: object
    steps_per_execution: int
    x: object
    y: object
    host_api: str = "keras"
    """The front end that calls each execution (``hardware.HOST_APIS``)."""
    input_samples_per_second: float | None = None
    """The rate of a simulated input pipeline working beside the device (:func:`.host.simulate_input_pipeline`),
    None for a host that keeps up."""
    caller_samples_per_second: float | None = None
    """The rate of a simulated input pipeline working in the caller's thread (``overlapped=False``), else None."""
    recorded: object = None
    """A custom training loop's step as it ran (``lowering.RecordedStep``), lowered instead of the model's step."""
    callback_seconds_per_step: float | None = None
    """The host's work per step when the callbacks run once per step beside the executions
    (``model.set_asynchronous_callbacks``), else None; the run's, not the program's."""
    program_builder: str | None = None
    """The framework that builds the program (``popart_program.PROGRAM_BUILDERS``); None: the one ``host_api``'s
    front end uses (:func:`.popart_program.builder_for`)."""

    @property
    def builder(self) -> str:
        """The framework that builds this program: "tensorflow", "popart" (a PopTorch program) or "popxl"."""
        return popart_program.builder_for(self.host_api, self.program_builder)

    def cache_key(self, model) -> tuple:
        """What makes this executable differ from another of the same model, known before lowering: the mode,
        the data's shapes, the setup and the options (Graphcore's TensorFlow keys its executables by the
        graph, which the model, these shapes and these options determine)."""
        options = options_of(model)

        def shape(data):
            """Shapes and dtypes of each array of a model's inputs or labels."""
            return None if data is None else tuple((np.shape(a), np.asarray(a).dtype.str) for a in arrays_of(data))

        return (
            self.mode,
            shape(self.x),
            shape(self.y),
            self.steps_per_execution,
            self.replicas,
            self.accumulation,
            self.reduction.name if self.mode == "train" and self.accumulation > 1 else None,
            repr(self.pipeline_plan),
            repr(sorted(options.pipelining.items())),
            repr(SyntheticData.from_flags()),
            tuple(id(w) for w in model.trainable_weights) if self.mode == "train" else (),
            self.builder,
            # the host's, not the program's: they change the time, not the executable (nor the on-disk cache's key)
            self.host_api,
            self.input_samples_per_second,
            self.caller_samples_per_second,
        )


@dataclass(frozen=True, eq=False)
class Prepared:
    """One mode's executable with the setup it runs in, and the compile (or load) time its first run pays."""

    setup: Setup
    executable: Executable
    compile_due: float = 0.0
    told_compile_only: bool = False


def prepare(model, mode, adapter, host_api: str = "keras", program_builder=None) -> tuple[Setup, ExecutionPlan]:
    """Check the model and data against the IPU's rules (:mod:`.preparation`), say what Graphcore's
    Keras says, and decide the run's setup (called from ``host_api``, with the host's input pipeline as
    simulated now, the program built by ``program_builder``: see :class:`Setup`); the ExecutionPlan is the
    epoch loop's."""
    __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
    configuration = preparation.configured_system()
    preparation.check_data_shape_known(adapter)
    options = options_of(model)
    plan = pipelining.plan_for(model, options.pipelining, configuration.num_ipus, configuration.allow_recompute)
    if mode == "train":
        pipelining.warn_unused(model, options.pipelining, plan, configuration.num_ipus)
    replicas, accumulation = preparation.replicas_and_accumulation(model, plan, configuration.num_ipus, mode, options)
    batch = preparation.fixed_batch_size(adapter)
    spe, per_replica = preparation.steps_per_replica(model, adapter.steps, model.steps_per_execution, replicas)
    preparation.check_steps_per_execution(plan, mode, spe, accumulation, per_replica)
    preparation.tell_effective_batch(mode, batch, replicas, accumulation)
    x, y = adapter.first_batch()
    rate, overlapped = host.input_pipeline_rate(), host.input_pipeline_overlapped()
    setup = Setup(
        mode,
        configuration,
        plan,
        replicas,
        accumulation,
        options.gradient_accumulation_reduction_method,
        spe,
        x,
        y,
        host_api,
        rate if overlapped else None,
        None if overlapped else rate,
        callback_seconds_per_step=(
            hardware.HOST.callback_step_s if callbacks_per_step(options, mode, spe, accumulation) else None
        ),
        program_builder=program_builder,
    )
    return setup, ExecutionPlan(
        steps_per_execution=spe,
        steps=per_replica,
        replicas=replicas,
        epoch_notice=preparation.epoch_notice(model, spe),
        callback_seconds_per_step=setup.callback_seconds_per_step,
    )


def host_call(setup: Setup, graph, synthetic: SyntheticData, spec) -> bsp.Timeline:
    """The Engine's timeline of the host's side of one execution: making its samples in the caller's thread (when
    the simulated input pipeline works there), then the front end's call of the program."""
    samples = 0 if synthetic.infeed else graph.micro_batch * setup.replicas * setup.steps_per_execution
    loading = host.caller_loading(samples, setup.caller_samples_per_second)
    return bsp.CostEngine(
        host.execution_program(setup.host_api, loading), spec, ipus=setup.configuration.num_ipus
    ).run()


def lowers_shape_only(model, configuration, options) -> bool:
    """Whether the model's step is traced from shapes alone (:mod:`.shape_only`, the same graph without numerics):
    when the program is compiled without running (``PRE_COMPILE`` / ``NEVER``), when ``debug.allowOutOfMemory``
    asks for a program that may not fit to be compiled for its report, as Poplar does, and for a model whose
    weights have no values (built inside ``ipu.utils.shape_only_weights``). A program that runs is lowered from
    the real micro-batch, whose numerics it computes anyway."""
    return not configuration.runs or options.allow_out_of_memory or shape_only_weights.without_values(model)


def compile_executable(
    model, setup: Setup, shape_only: bool | None = None, allow_out_of_memory: bool = False
) -> tuple[Executable, float]:
    """Lower ``model`` for ``setup``, cost one execution with the BSP Engine and lay out its memory; returns
    the executable and the seconds its first run pays (compiling it, or loading it from the executable cache).
    ``shape_only`` traces the step from shapes (None: as :func:`lowers_shape_only` decides);
    ``allow_out_of_memory`` compiles a program that does not fit, as ``debug.allowOutOfMemory`` does."""
    mode, configuration, plan, replicas = setup.mode, setup.configuration, setup.pipeline_plan, setup.replicas
    spe, accumulation, io_tiles = setup.steps_per_execution, setup.accumulation, configuration.io_tiles
    if io_tiles.count and plan is not None:
        raise IPURuleError(
            f"`{model.name}` is pipelined and IPUConfig.io_tiles asks for {io_tiles.count} I/O tiles: "
            "ipu-teach simulates I/O tiles for programs that are not pipelined; set "
            "io_tiles.num_io_tiles = 0 for this model"
        )
    spec = io_tiles.compute_spec(configuration.spec)
    stage_options = options_of(model).pipelining if plan is not None else None
    options = capture.engine_options(configuration)
    recompute_segments = (
        recomputation.segments_for(model, plan, configuration.allow_recompute, options_of(model).pipelining)
        if setup.recorded is None
        else None
    )
    graph = lower(
        model,
        mode,
        setup.x,
        setup.y,
        spec,
        accumulation=accumulation,
        replicas=replicas,
        options_for=poplar_options.options_for(configuration, plan, stage_options),
        recorded=setup.recorded,
        shape_only=lowers_shape_only(model, configuration, options) if shape_only is None else shape_only,
        recompute_segments=recompute_segments,
        offload_optimizer_state=offloading.optimizer_state_offloaded(
            options_of(model), configuration, accumulation, plan is not None
        ),
        program_builder=setup.builder,
    )
    synthetic = SyntheticData.from_flags()
    buffer_bytes = configuration.cross_replica_sum_buffer_bytes
    call = host_call(setup, graph, synthetic, spec)
    feeding = (setup.input_samples_per_second, call.seconds())  # the pipeline works on while the host calls
    pipelined = (
        None
        if plan is None
        else PipelinedRun.build(graph, plan, spe, accumulation, replicas, buffer_bytes, synthetic, *feeding)
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
    if overflow is not None and not (options.allow_out_of_memory or allow_out_of_memory):
        poplar_log.log("ENGINE", "ERR", str(overflow).splitlines()[0])
        raise overflow
    description = {
        "graph": graph.signature,
        "mode": mode,
        "micro_batch": graph.micro_batch,
        "steps_per_execution": spe,
        "replicas": replicas,
        "accumulation": accumulation,
        "cross_replica_sum_buffer": buffer_bytes if replicas > 1 else 0,
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
    if recompute_segments is not None:
        description["recomputation_segments"] = [recompute_segments.get(layer.name) for layer in model.layers]
    if io_tiles.count:
        description["io_tiles"] = [io_tiles.count, io_tiles.memory_proportion]
    if mode == "train" and accumulation > 1:  # compiled into the accumulation loop
        description["gradient_accumulation_reduction_method"] = setup.reduction.name
    if setup.builder != "tensorflow":  # the same ops, another framework's program
        description["program_builder"] = setup.builder
    key = executable_cache.key_of(description)
    if pipelined is None:
        program = execution_programs.execution_program(
            graph, spe, accumulation, replicas, buffer_bytes, synthetic, io_tiles, *feeding
        )
        timeline = bsp.CostEngine(program, spec, ipus=replicas).run()
    else:
        timeline = pipelined.execution
    compile_seconds = compile_time.compile_seconds(graph, None if pipelined is None else pipelined.stage_graphs)
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
        call.seconds() + timeline.seconds(),
        compile_seconds,
        bool(cached),
        pipelined,
        overflow,
        synthetic,
        spe,
    )
    if synthetic.active:
        synthetic.tell(model.name)
    capture.on_compile(model, mode, executable, configuration, options)
    poplar_log.compiled(model.name, mode, executable)
    for compiled in _listeners:
        compiled.append((model.name, mode, executable))
    return executable, due


def run(model, prepared: Prepared, batches, step_logs=None) -> tuple[list, float, Prepared]:
    """Run ``batches`` (one execution's) on the prepared executable: returns the results, the simulated
    seconds (with the compile time the first run pays) and the Prepared for the next run. Each step's logs
    are appended to ``step_logs`` when it is a list (for callbacks run per step)."""
    executable, setup = prepared.executable, prepared.setup
    connection = setup.configuration
    if executable.out_of_memory is not None and connection.runs:
        raise out_of_memory.CannotRunOutOfMemoryError(executable.out_of_memory)
    if connection.runs:
        shape_only_weights.check_runnable(model)
    batch = executable.graph.micro_batch
    for x, _ in batches:
        if batch_size_of(x) != batch:
            raise IPURuleError(
                f"A batch of {batch_size_of(x)} samples reached an IPU program compiled for batches of "
                f"{batch}: use Dataset.batch({batch}, drop_remainder=True) or trim the data"
            )
    if executable.synthetic.infeed:
        batches = _synthetic_batches(executable.synthetic, batches)
    if connection.runs:
        with precision.ipu_numerics(
            connection.matmul_options.partials_type,
            connection.conv_options.partials_type,
            connection.rounding_rng if connection.stochastic_rounding else None,
        ):
            results = _NUMERICS[setup.mode](model, setup, batches, step_logs)
    else:
        results = _compile_only(model, setup, batches, prepared.told_compile_only)
        if step_logs is not None:
            step_logs.extend(step_log(model, setup.mode, result) for result in results)
    seconds = executable.seconds_per_execution * connection.runs + prepared.compile_due
    poplar_log.ran(model.name, setup.mode, executable, len(batches), seconds, connection.runs)
    return results, seconds, replace(prepared, compile_due=0.0, told_compile_only=True)


class IPUExecutor:
    """Runs fit / evaluate / predict of one model on the IPUs the system configuration selected: keeps the
    model's executables (looked up by :meth:`Setup.cache_key` before anything is lowered) and each mode's
    Prepared, and passes them to :func:`prepare`, :func:`compile_executable` and :func:`run`; ``host_api`` names
    the front end that calls each execution (``hardware.HOST_APIS``), whose host cost per call differs, and
    ``program_builder`` the framework that builds its program when it is not that front end's own (see
    :mod:`.popart_program`)."""

    time_note = "(simulated)"

    def __init__(self, model, host_api: str = "keras", program_builder: str | None = None):
        hardware.HOST.execution_seconds(host_api)  # names the APIs if this one is unknown
        popart_program.builder_for(host_api, program_builder)  # and the builders
        self.model, self.host_api, self.program_builder = model, host_api, program_builder
        self.executables = {}
        """Setup.cache_key -> Executable, for the system configuration ``configuration``."""
        self.configuration = None
        self.prepared = {}
        """Mode -> Prepared: fit validates between epochs, so each mode keeps its own to return to."""
        self.lowerings = 0
        """How many times this executor lowered the model (each new executable lowers it once)."""

    def prepare(self, model, mode, adapter) -> ExecutionPlan:
        """Prepare ``mode``'s run and compile (or reuse) its executable: the plan of the epoch loop."""
        __tracebackhide__ = True  # IPython and pytest leave this frame out: the traceback starts at the user's call
        setup, plan = prepare(model, mode, adapter, self.host_api, self.program_builder)
        if setup.configuration != self.configuration:
            # a new configure_ipu_system detaches the IPUs: nothing compiled for the old system is reused
            self.executables.clear()
            self.configuration = setup.configuration
        key = setup.cache_key(model)
        executable, due = self.executables.get(key), 0.0
        if executable is None:
            executable, due = compile_executable(model, setup)
            self.lowerings += 1
            self.executables[key] = executable
        elif (
            executable.out_of_memory is not None and not capture.engine_options(setup.configuration).allow_out_of_memory
        ):
            raise executable.out_of_memory
        self.prepared[mode] = Prepared(setup, executable, due)
        return plan

    def run(self, model, mode, batches, step_logs=None):
        results, seconds, self.prepared[mode] = run(model, self.prepared[mode], batches, step_logs)
        return results, seconds

    def step_arrivals(self, mode, seconds) -> list:
        """When each step of the execution of ``mode`` that took ``seconds`` reached the host (``Executable``)."""
        prepared = self.prepared[mode]
        return prepared.executable.step_arrivals(seconds, prepared.setup.configuration.runs)


def _synthetic_batches(synthetic, batches):
    """The batches the IPU makes for itself under --use_synthetic_data (same shapes, not the dataset's)."""
    rng = np.random.default_rng(len(batches))
    return [synthetic.inputs((x, y), rng) for x, y in batches]


def _compile_only(model, setup, batches, told):
    """PRE_COMPILE / NEVER: the program is compiled (and cached) but never runs, as on the real system."""
    if not told:
        messages.info(
            f"device_connection.type is {setup.configuration.connection.name}: `{model.name}` was compiled "
            "but does not run; its weights do not change and its results are zeros."
        )
    if setup.mode == "predict":
        shapes = model.output_shape if isinstance(model.output_shape, list) else None
        if shapes is None:
            return [np.zeros((batch_size_of(x),) + tuple(model.output_shape[1:]), np.float32) for x, _ in batches]
        return [[np.zeros((batch_size_of(x),) + tuple(s[1:]), np.float32) for s in shapes] for x, _ in batches]
    return [0.0] * len(batches)


def _train(model, setup, batches, step_logs=None):
    """Each weight update takes ``replicas * accumulation`` batches: the infeed deals them to the
    replicas in turn (replica r gets batches r, r + R, ...); each replica accumulates its own,
    then the replicas' gradients are summed (``gradient_accumulation``)."""
    results, per_update = [], setup.replicas * setup.accumulation
    if step_overrides.overridden(model, "train"):
        return _own_train_steps(model, setup, batches)
    for start in range(0, len(batches), per_update):
        # the moving statistics and the weights change together, or not at all
        for loss, y, y_pred in atomic_step.run(_weight_update, model, setup, batches[start : start + per_update]):
            model.update_metrics(loss, y, y_pred)
            results.append(loss)
            _log_step(model, "train", loss, step_logs)
    return results


def _own_train_steps(model, setup, batches) -> list:
    """A train_step of the model's own, batch by batch: the update is its own, so neither the replicas' sum
    nor gradient accumulation can be put around it here."""
    if setup.replicas > 1 or setup.accumulation > 1:
        from ..not_simulated import NotSimulatedError

        raise NotSimulatedError(
            f"{type(model).__name__}.train_step on {setup.replicas} replica(s) with gradient accumulation of "
            f"{setup.accumulation} (ipu-teach runs a train_step of your own on one replica without accumulation: "
            "use auto_select_ipus = 1 and no gradient_accumulation_steps_per_replica, or the built-in train_step)"
        )
    step = step_overrides.runner(model, "train")
    return [step(x, y) for x, y in batches]


def _weight_update(model, setup, batches) -> list:
    """One weight update from ``replicas * accumulation`` batches; returns (loss, y, y_pred) of each."""
    gradients, outcomes, replicas = [], [], setup.replicas
    with global_batch.in_parts():  # layers that keep per-batch state (moving statistics) update it once
        for x, y in batches:
            loss, grads, y_pred = model.compute_gradients(x, y)
            gradients.append(grads)
            outcomes.append((loss, y, y_pred))
    model.apply_gradients(
        cross_replica_sum([accumulate(gradients[r::replicas], setup.reduction) for r in range(replicas)])
    )
    return outcomes


def _test(model, setup, batches, step_logs=None):
    step = step_overrides.runner(model, "test")
    return [_log_step(model, "test", step(x, y), step_logs) for x, y in batches]


def _predict(model, setup, batches, step_logs=None):
    step = step_overrides.runner(model, "predict")
    return [_log_step(model, "predict", step(x), step_logs) for x, _ in batches]


def _log_step(model, mode, result, step_logs):
    """Appends the step's logs to ``step_logs`` (when callbacks run per step); returns its result."""
    if step_logs is not None:
        step_logs.append(step_log(model, mode, result))
    return result


_NUMERICS = {"train": _train, "test": _test, "predict": _predict}
"""Each mode's numerics, on the host's numpy (the simulated IPU's numerics are the CPU's)."""
