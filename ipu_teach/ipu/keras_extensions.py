"""Graphcore's IPU methods of ``keras.Model``, as an extension registered with Keras' extension point.

``ModelExtension`` is Graphcore's (graphcore/keras keras/ipu/extensions/model_extensions.py, with the
options of extensions_base.py): gradient accumulation, replication, infeed and outfeed options, the
pipelining options and stage assignment, and ipu-teach's ``get_ipu_executable``. Importing
``ipu_teach.ipu`` registers it for ``keras.Model`` (``keras.engine.extensions``), as
keras/ipu/extensions/register_extensions.py registers Graphcore's; each model built afterwards is a
``ModelExtension`` and owns an ``ExtensionOptions`` that its methods fill in and the executor reads
(``options_of``) when it compiles. Outside an IPU scope the options have no effect, as on the real system.

Which models have the methods: every model built after ``ipu_teach.ipu`` is imported, inside an
``IPUStrategy`` scope or not. Graphcore's SDK gives them only to models built in the scope (the
strategy's ``_patch_keras_extension``, graphcore/tensorflow tensorflow/python/ipu/keras_extensions.py); here
the methods only record options, which take effect when a model created in the scope (``keras.engine.device``)
runs, and the course sets stage assignments on a model it only inspects (notebook 04). Code written for the
SDK, which builds its models in the scope, runs unchanged. A model built before the import, or with
``ipu_teach.keras`` alone, has none of them and its AttributeError says to import ``ipu_teach.ipu``.

Graphcore has one extension each for Functional, Sequential and subclassed models; here a Sequential
differs only in taking one stage per layer before it is built (``pipelining.set_pipeline_stage_assignment``),
so one extension serves both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..keras.engine.extensions import register_model_extension
from ..keras.models import Model
from . import keyword_checks, pipelining
from .gradient_accumulation import GradientAccumulationReductionMethod
from .ops.pipelining_ops import PipelineSchedule, RecomputationMode
from .poplar_options import check_stage_options

EXECUTABLE_MODES = {"train": "fit", "test": "evaluate", "predict": "predict"}  # Keras' ModeKeys


@dataclass
class ExtensionOptions:
    """What one model's IPU methods recorded (Graphcore keeps the same on the extension:
    ``_gradient_accumulation_steps_per_replica``, ``_pipelining_*``, ``_infeed_kwargs``...)."""

    gradient_accumulation_steps_per_replica: int | None = None
    gradient_accumulation_reduction_method: GradientAccumulationReductionMethod = (
        GradientAccumulationReductionMethod.SUM
    )
    gradient_accumulation_optimizer_kwargs: dict = field(default_factory=dict)
    replicated_metric_reduction_method: str = "mean"
    replication_kwargs: dict = field(default_factory=dict)
    infeed_queue_options: dict = field(default_factory=dict)
    outfeed_queue_options: dict = field(default_factory=dict)
    pipelining: dict = field(default_factory=dict)
    """``set_pipelining_options``' values (empty until it is called)."""
    accumulate_outfeed: bool = False
    """``set_pipelining_options(accumulate_outfeed=...)``: the outfeed returns results accumulated over the
    execution's steps, so callbacks cannot run per step (only what it does to ``asynchronous_callbacks``
    is simulated)."""
    asynchronous_callbacks: bool = False
    """``set_asynchronous_callbacks``: callbacks run once per step on a polling thread beside the executions."""


def options_of(model) -> ExtensionOptions:
    """The options ``model``'s IPU methods recorded; the defaults for a model built before ``ipu_teach.ipu``
    was imported (it has no IPU methods, so nothing to record); a stand-in's own ``ipu_options`` if it has them."""
    if isinstance(model, ModelExtension):
        return model._ipu_options
    return getattr(model, "ipu_options", None) or ExtensionOptions()  # a stand-in for a model (a PopTorch program)


def callbacks_per_step(options: ExtensionOptions, mode: str, steps_per_execution: int, accumulation: int) -> bool:
    """Whether ``mode``'s callbacks run once per step (``set_asynchronous_callbacks``): not when the outfeed
    accumulates over several steps (``accumulate_outfeed``: over the accumulation in ``fit``, over the execution
    in ``evaluate``; never in ``predict``), as graphcore/keras extensions_base.py decides it."""
    accumulated_steps = {"train": accumulation, "test": steps_per_execution, "predict": 1}[mode]
    return options.asynchronous_callbacks and not (options.accumulate_outfeed and accumulated_steps > 1)


def _check_steps(steps) -> None:
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"gradient_accumulation_steps_per_replica must be a positive integer, got {steps!r}")


class ModelExtension:
    """The IPU methods every ``keras.Model`` built after ``import ipu_teach.ipu`` has (see the module)."""

    def __init__(self):
        self._ipu_options = ExtensionOptions()

    def set_gradient_accumulation_options(
        self, gradient_accumulation_steps_per_replica=None, gradient_accumulation_reduction_method="sum", **kwargs
    ):
        """Sets the gradient accumulation options of a non-pipelined model (Graphcore's Keras).

        Accumulates the gradients of ``gradient_accumulation_steps_per_replica`` micro-batches before each
        weight update: a large effective batch from micro-batches that fit in tile memory. They are reduced
        as Graphcore's Keras does: summed by default (``"sum"``), so k micro-batches of b step like one batch
        of k*b at k times the learning rate; ``"mean"`` and ``"running_mean"`` step like one batch of k*b.
        ``steps_per_execution`` must be a multiple of the accumulation count.

        Args:
          gradient_accumulation_steps_per_replica: Integer, the micro-batches accumulated per weight update.
            Default: None, no accumulation.
          gradient_accumulation_reduction_method: ``"sum"``, ``"mean"`` or ``"running_mean"``, or an
            ``ipu.optimizers.GradientAccumulationReductionMethod``. Default: ``"sum"``.
          **kwargs: Graphcore's other accumulation keywords (``gradient_accumulation_dtype``, ...), recorded.

        Raises:
          ValueError: if the count is not a positive integer, or the method is unknown.

        Example:

        >>> from ipu_teach.examples import configure_ipus
        >>> config = configure_ipus(1)
        >>> with ipu.ipu_strategy.IPUStrategy().scope():
        ...     model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
        ...     model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=4)
        ...     model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        ...     x, y = np.ones((16, 4), np.float32), keras.utils.to_categorical(np.zeros(16), 2)
        ...     history = model.fit(x, y, batch_size=4, verbose=0)
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        """
        keyword_checks.check(
            "set_gradient_accumulation_options",
            kwargs,
            keyword_checks.GRADIENT_ACCUMULATION_KEYWORDS,
            keyword_checks.GRADIENT_ACCUMULATION_RESERVED,
        )
        _check_steps(gradient_accumulation_steps_per_replica)
        options = self._ipu_options
        options.gradient_accumulation_reduction_method = GradientAccumulationReductionMethod.parse(
            gradient_accumulation_reduction_method
        )
        options.gradient_accumulation_steps_per_replica = gradient_accumulation_steps_per_replica
        options.gradient_accumulation_optimizer_kwargs = dict(kwargs)

    def set_replication_options(self, replicated_metric_reduction_method="mean", **kwargs):
        """Metrics of the replicas are averaged; other replication options are recorded only."""
        self._ipu_options.replicated_metric_reduction_method = replicated_metric_reduction_method
        self._ipu_options.replication_kwargs = dict(kwargs)

    def set_infeed_queue_options(self, **kwargs):
        """Options of the queue that streams batches to the IPU, as Graphcore's ``IPUInfeedQueue`` takes them.

        ``prefetch_depth`` (a positive whole number; Graphcore's default 1) is how many batches Poplar may
        move close to the IPU before it asks for them. On a real host a deeper prefetch absorbs the moments
        when the input pipeline is slow (long ``StreamCopyBegin`` in the PopVision trace). The simulated
        host's pipeline runs beside the device, so the depth is checked and recorded but changes no simulated
        time; a slow input pipeline is simulated with ``ipu.host.simulate_input_pipeline``. What remains of host
        I/O is the transfer itself and its syncs (see ``TF_POPLAR_FLAGS
        --use_synthetic_data`` and ``IPUConfig.io_tiles``)."""
        depth = kwargs.get("prefetch_depth")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
            raise ValueError(
                f"set_infeed_queue_options: prefetch_depth must be a positive whole number (the batches "
                f"Poplar may fetch ahead; default 1), got {depth!r}"
            )
        self._ipu_options.infeed_queue_options = dict(kwargs)

    def set_outfeed_queue_options(self, **kwargs):
        """Options of the queue that streams results back (``buffer_depth``...): recorded only."""
        self._ipu_options.outfeed_queue_options = dict(kwargs)

    def set_asynchronous_callbacks(self, asynchronous=False):
        """Runs the callbacks and the progress bar once per step, beside the executions (Graphcore's Keras).

        Without it, ``fit``, ``evaluate`` and ``predict`` call the callbacks once per execution, after its
        ``steps_per_execution`` steps. With it, a polling thread takes each step's results off the outfeed as the
        device produces them and calls ``on_*_batch_begin`` and ``on_*_batch_end`` for that step (once per
        replica), while the executions run. The simulated host's work per step (the dequeue, the callbacks, the
        logs for the progress bar: ``hardware.HostSpec.callback_step_s``) runs beside the device, so a step
        shows the slower of the two. Ignored for ``fit`` and ``evaluate`` when ``set_pipelining_options`` was
        given ``accumulate_outfeed=True`` and the outfeed accumulates over several steps, as in Graphcore's Keras
        (graphcore/keras keras/ipu/extensions/extensions_base.py and polling_thread.py).

        Args:
          asynchronous: True to run the callbacks per step. Default: False.

        Raises:
          ValueError: if ``asynchronous`` is not True or False.

        Example:

        >>> from ipu_teach.examples import configure_ipus
        >>> config = configure_ipus(1)
        >>> with ipu.ipu_strategy.IPUStrategy().scope():
        ...     model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
        ...     model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        ...     model.set_asynchronous_callbacks(True)
        ...     x, y = np.ones((8, 4), np.float32), keras.utils.to_categorical(np.zeros(8), 2)
        ...     steps = keras.callbacks.LambdaCallback(on_batch_end=lambda batch, logs: print(batch, end=" "))
        ...     history = model.fit(x, y, batch_size=2, verbose=0, callbacks=[steps])
        0 1 2 3
        """
        if not isinstance(asynchronous, bool):
            raise ValueError(f"set_asynchronous_callbacks: asynchronous must be True or False, got {asynchronous!r}")
        self._ipu_options.asynchronous_callbacks = asynchronous

    def get_ipu_executable(self, mode="train"):
        """Returns the simulated IPU executable this model last compiled for ``mode`` (ipu-teach only).

        The executable holds what the simulator worked out: ``seconds_per_execution`` (simulated, host
        overhead included), ``compile_seconds``, ``from_cache``, the lowered ``graph``, its ``timeline`` and,
        when pipelined, ``pipeline`` (each stage's costs, schedule and graph). The real SDK hides its Poplar
        executables; PopVision reports show the same figures. Each mode keeps its own executable, so the
        training pipeline is still there after ``evaluate``.

        Args:
          mode: ``"train"`` (fit), ``"test"`` (evaluate) or ``"predict"``, Keras' mode names. Default: ``"train"``.

        Returns:
          The ``Executable``.

        Raises:
          ValueError: for another mode, a model not created in an ``IPUStrategy`` scope, or a mode not run
            since the last compile (the message says which call to make).

        Example:

        >>> from ipu_teach.examples import configure_ipus
        >>> config = configure_ipus(1)
        >>> with ipu.ipu_strategy.IPUStrategy().scope():
        ...     model = keras.Sequential([keras.layers.Dense(2, activation="softmax", input_shape=(4,))])
        ...     model.compile("sgd", "categorical_crossentropy", steps_per_execution=2)
        ...     x, y = np.ones((8, 4), np.float32), keras.utils.to_categorical(np.zeros(8), 2)
        ...     history = model.fit(x, y, batch_size=4, verbose=0)
        >>> executable = model.get_ipu_executable("train")
        >>> executable.from_cache, executable.graph.compute_sets > 0, executable.seconds_per_execution > 0
        (False, True, True)
        """
        if mode not in EXECUTABLE_MODES:
            raise ValueError(
                f"get_ipu_executable: mode must be one of {', '.join(map(repr, EXECUTABLE_MODES))} "
                f"(Keras' mode names for fit, evaluate and predict), got {mode!r}"
            )
        prepared = getattr(self.device_executor, "prepared", None)
        if prepared is None:
            raise ValueError(
                f"get_ipu_executable: `{self.name}` has not been compiled for the IPU: create it inside an "
                "IPUStrategy scope and compile it, then fit, evaluate or predict"
            )
        if mode not in prepared:
            ran = ", ".join(f"{m!r} ({EXECUTABLE_MODES[m]})" for m in prepared) or "none"
            raise ValueError(
                f"get_ipu_executable: `{self.name}` has no {mode!r} executable since it was last compiled: "
                f"call {EXECUTABLE_MODES[mode]} first (compiled since: {ran})"
            )
        return prepared[mode].executable

    def set_pipelining_options(
        self,
        gradient_accumulation_steps_per_replica=None,
        device_mapping=None,
        accumulate_outfeed=None,
        gradient_accumulation_reduction_method="sum",
        pipeline_schedule=None,
        recomputation_mode=None,
        **pipelining_kwargs,
    ):
        """Sets the pipelining options of a model whose layers have pipeline stages (Graphcore's Keras).

        Each stage runs on its own IPU; micro-batches flow through the stages so the IPUs work at the same
        time, and their gradients are accumulated over ``gradient_accumulation_steps_per_replica``
        micro-batches before each weight update, so a pipeline computes exactly what gradient accumulation
        computes. The reduction method is the one ``set_gradient_accumulation_options`` sets too (the last
        call wins, as in Graphcore's Keras).

        Args:
          gradient_accumulation_steps_per_replica: Integer, the micro-batches accumulated per weight update;
        ``steps_per_execution`` must be a multiple of it, and the schedule may need a multiple of the
        stage count (Grouped: 2 x stages).
          device_mapping: Optional list, the IPU of each stage. Default: None, stage n on IPU n.
          accumulate_outfeed: True to accumulate the outfeed's results over an execution's steps (Graphcore's
        option): recorded, and it makes ``fit`` and ``evaluate`` ignore ``set_asynchronous_callbacks``.
          gradient_accumulation_reduction_method: ``"sum"`` (Graphcore's default), ``"mean"`` or
        ``"running_mean"``, or a ``GradientAccumulationReductionMethod``.
          pipeline_schedule: An ``ipu.ops.pipelining_ops.PipelineSchedule``. Default: None, Grouped.
          recomputation_mode: An ``ipu.ops.pipelining_ops.RecomputationMode``. Default: None, Auto.
          **pipelining_kwargs: Graphcore's per-stage options (``forward_propagation_stages_poplar_options``,
        ``backward_propagation_stages_poplar_options``) and other recognised pipelining keywords.

        Raises:
          ValueError: for a value of the wrong kind (the message names the argument and what it takes).
          TypeError: for a keyword argument that does not exist.

        Example:

        >>> from ipu_teach.examples import configure_ipus, two_stage_model
        >>> config = configure_ipus(2)
        >>> with ipu.ipu_strategy.IPUStrategy().scope():
        ...     model = two_stage_model()           # Dense(8) on stage 0, Dense(2) on stage 1
        ...     model.set_pipelining_options(gradient_accumulation_steps_per_replica=4,
        ...         pipeline_schedule=ipu.ops.pipelining_ops.PipelineSchedule.Grouped)
        ...     model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        ...     x, y = np.ones((16, 4), np.float32), keras.utils.to_categorical(np.zeros(16), 2)
        ...     history = model.fit(x, y, batch_size=4, verbose=0)
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> model.get_ipu_executable("train").pipeline.costs.stages
        2
        """
        keyword_checks.check(
            "set_pipelining_options",
            pipelining_kwargs,
            keyword_checks.PIPELINING_KEYWORDS,
            keyword_checks.PIPELINING_RESERVED,
        )
        _check_steps(gradient_accumulation_steps_per_replica)
        if pipeline_schedule is not None and not isinstance(pipeline_schedule, PipelineSchedule):
            raise ValueError(
                f"pipeline_schedule must be an ipu.ops.pipelining_ops.PipelineSchedule "
                f"(Grouped, Interleaved or Sequential), got {pipeline_schedule!r}"
            )
        if recomputation_mode is not None and not isinstance(recomputation_mode, RecomputationMode):
            raise ValueError(
                f"recomputation_mode must be an ipu.ops.pipelining_ops.RecomputationMode, got {recomputation_mode!r}"
            )
        if device_mapping is not None and any(
            isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in device_mapping
        ):
            raise ValueError(f"device_mapping must list one IPU index (>= 0) per stage, got {device_mapping!r}")
        options = self._ipu_options
        options.gradient_accumulation_reduction_method = GradientAccumulationReductionMethod.parse(
            gradient_accumulation_reduction_method
        )
        options.accumulate_outfeed = bool(accumulate_outfeed)
        options.pipelining = {
            "gradient_accumulation_steps_per_replica": gradient_accumulation_steps_per_replica,
            "device_mapping": device_mapping,
            "pipeline_schedule": pipeline_schedule or PipelineSchedule.Grouped,
            "recomputation_mode": recomputation_mode or RecomputationMode.Auto,
            "offload_weight_update_variables": pipelining_kwargs.get("offload_weight_update_variables"),
            **_stage_poplar_options(pipelining_kwargs),
        }

    # the pipeline stage assignment (Graphcore's get/set/reset/print_pipeline_stage_assignment...)
    get_pipeline_stage_assignment = pipelining.get_pipeline_stage_assignment
    set_pipeline_stage_assignment = pipelining.set_pipeline_stage_assignment
    reset_pipeline_stage_assignment = pipelining.reset_pipeline_stage_assignment
    print_pipeline_stage_assignment_summary = pipelining.print_pipeline_stage_assignment_summary


def _stage_poplar_options(pipelining_kwargs) -> dict:
    """Graphcore's per-stage Poplar options (a list of PipelineStageOptions for the forward and the backward
    stages): how a Keras model sets availableMemoryProportion or partialsType for some layers only."""
    names = ("forward_propagation_stages_poplar_options", "backward_propagation_stages_poplar_options")
    return {name: check_stage_options(pipelining_kwargs.get(name), name) for name in names}


register_model_extension(Model, ModelExtension)  # as keras/ipu/extensions/register_extensions.py does
