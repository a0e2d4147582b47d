"""Methods Graphcore's port adds to ``keras.Model``: gradient accumulation and replication options,
and ipu-teach's ``get_ipu_executable`` to look at what was compiled.

The option setters only record options; the IPU executor reads them when it compiles. Outside an IPU
scope they have no effect, as on the real system.
"""
from ..keras.models import Model
from . import keyword_checks, pipelining
from .gradient_accumulation import GradientAccumulationReductionMethod
from .pipelining import model_options as _options

EXECUTABLE_MODES = {"train": "fit", "test": "evaluate", "predict": "predict"}  # Keras' ModeKeys


def set_gradient_accumulation_options(self, gradient_accumulation_steps_per_replica=None,
                                      gradient_accumulation_reduction_method="sum", **kwargs):
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
    keyword_checks.check("set_gradient_accumulation_options", kwargs, keyword_checks.GRADIENT_ACCUMULATION_KEYWORDS,
                         keyword_checks.GRADIENT_ACCUMULATION_RESERVED)
    steps = gradient_accumulation_steps_per_replica
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        raise ValueError(f"gradient_accumulation_steps_per_replica must be a positive integer, got {steps!r}")
    method = GradientAccumulationReductionMethod.parse(gradient_accumulation_reduction_method)
    _options(self).update(gradient_accumulation_steps_per_replica=steps,
                          gradient_accumulation_reduction_method=method, **kwargs)


def set_replication_options(self, replicated_metric_reduction_method="mean", **kwargs):
    """Metrics of the replicas are averaged; other replication options are recorded only."""
    _options(self).update(replicated_metric_reduction_method=replicated_metric_reduction_method, **kwargs)


def set_infeed_queue_options(self, **kwargs):
    """Options of the queue that streams batches to the IPU, as Graphcore's ``IPUInfeedQueue`` takes them.

    ``prefetch_depth`` (a positive whole number; Graphcore's default 1) is how many batches Poplar may
    move close to the IPU before it asks for them. On a real host a deeper prefetch absorbs the moments
    when the input pipeline is slow (long ``StreamCopyBegin`` in the PopVision trace). The simulated
    host has every batch ready in time, so the depth is checked and recorded but changes no simulated
    time: what remains of host I/O is the transfer itself and its syncs (see ``TF_POPLAR_FLAGS
    --use_synthetic_data`` and ``IPUConfig.io_tiles``)."""
    depth = kwargs.get("prefetch_depth")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise ValueError(f"set_infeed_queue_options: prefetch_depth must be a positive whole number (the batches "
                         f"Poplar may fetch ahead; default 1), got {depth!r}")
    _options(self).update(infeed_queue_options=dict(kwargs))


def set_outfeed_queue_options(self, **kwargs):
    """Options of the queue that streams results back (``buffer_depth``...): recorded only."""
    _options(self).update(outfeed_queue_options=dict(kwargs))


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
      ValueError: for another mode, a model not compiled in an ``IPUStrategy`` scope, or a mode not run
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
        raise ValueError(f"get_ipu_executable: mode must be one of {', '.join(map(repr, EXECUTABLE_MODES))} "
                         f"(Keras' mode names for fit, evaluate and predict), got {mode!r}")
    prepared = getattr(self.device_executor, "prepared", None)
    if prepared is None:
        raise ValueError(f"get_ipu_executable: `{self.name}` has not been compiled for the IPU: create it and call "
                         "compile inside an IPUStrategy scope, then fit, evaluate or predict")
    if mode not in prepared:
        ran = ", ".join(f"{m!r} ({EXECUTABLE_MODES[m]})" for m in prepared) or "none"
        raise ValueError(f"get_ipu_executable: `{self.name}` has no {mode!r} executable since it was last compiled: "
                         f"call {EXECUTABLE_MODES[mode]} first (compiled since: {ran})")
    return prepared[mode][0]


def install():
    Model.set_gradient_accumulation_options = set_gradient_accumulation_options
    Model.set_replication_options = set_replication_options
    Model.set_infeed_queue_options = set_infeed_queue_options
    Model.set_outfeed_queue_options = set_outfeed_queue_options
    Model.get_ipu_executable = get_ipu_executable
    pipelining.install()
