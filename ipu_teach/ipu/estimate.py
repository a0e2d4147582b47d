"""``ipu.utils.estimate``: size a model on the simulated IPUs without training it.

What a learner asks before buying time on a Pod: does the model fit, how long does it compile, how fast does it
run with this many replicas, this accumulation, these pipeline stages, this precision? The answer is the
program ``fit`` (or ``evaluate`` / ``predict``) would compile, compiled the way ``DeviceConnectionType.PRE_COMPILE``
compiles it: the same preparation (the configured system, the model's pipelining and gradient-accumulation
options, its ``steps_per_execution``, the dtype policy it was built under), the step traced from shapes alone
(:mod:`.shape_only`: no numerics, so a ResNet-50 takes seconds), costed by the BSP Engine and laid out in memory.
A program that does not fit is compiled anyway and said not to fit, as ``debug.allowOutOfMemory`` lets Poplar
compile it for its report. Nothing of the model changes and nothing runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..keras.engine.data_adapter import get_data_adapter
from ..keras.layers.base import input_value_dtype
from ..profiling.build import graphs_per_ipu
from . import executor
from .shape_only import placeholder

MODES = ("train", "test", "predict")
_CALLS = {"train": "fit", "test": "evaluate", "predict": "predict"}


@dataclass(frozen=True)
class Estimate:
    """What sizing a model found: its program's compile time, time per step, throughput and memory.

    ``tile_bytes`` holds, for each IPU of one replica, the bytes each tile needs (the sum of its pipeline stages'
    when several share it, as a ``device_mapping`` such as ``[0, 1, 2, 3, 0]`` puts them: their weights and code
    are all there, and a pipeline keeps their activations live together);
    ``memory_by_category`` the bytes of each PopVision category live at each IPU's fullest program step, summed
    over its tiles and the IPUs (tensors never live together share memory, so they are not all counted).
    ``executable`` is the compiled program itself (``explain()``, ``graph``, ``timeline``), as
    ``model.get_ipu_executable`` gives it.
    """

    model_name: str
    mode: str
    micro_batch: int
    replicas: int
    accumulation: int
    ipus_per_replica: int
    steps_per_execution: int
    compile_seconds: float
    seconds_per_execution: float
    sram_per_tile: int
    tile_bytes: tuple
    memory_by_category: dict
    executable: object

    @property
    def seconds_per_step(self) -> float:
        """One step's share of an execution: the time per step Keras' progress bar shows.

        Example:

        >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
        >>> config = configure_ipus(1)
        >>> model = keras.Model(*tutorial_model_fn())
        >>> model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        >>> sizing = ipu.utils.estimate(model, batch_size=32)
        >>> sizing.seconds_per_step == sizing.seconds_per_execution / 4
        True
        """
        return self.seconds_per_execution / self.steps_per_execution

    @property
    def samples_per_second(self) -> float:
        """Throughput: the samples of one execution (every replica's micro-batches) over its time.

        Example:

        >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
        >>> config = configure_ipus(1)
        >>> model = keras.Model(*tutorial_model_fn())
        >>> model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        >>> sizing = ipu.utils.estimate(model, batch_size=32)
        >>> sizing.samples_per_second == 32 * 4 / sizing.seconds_per_execution
        True
        """
        return self.micro_batch * self.replicas * self.steps_per_execution / self.seconds_per_execution

    @property
    def max_tile_bytes(self) -> int:
        """The bytes the fullest tile of any of the replica's IPUs needs: the figure that decides whether it fits.

        Example:

        >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
        >>> config = configure_ipus(1)
        >>> model = keras.Model(*tutorial_model_fn())
        >>> model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        >>> sizing = ipu.utils.estimate(model, batch_size=32)
        >>> sizing.max_tile_bytes == int(sizing.tile_bytes[0].max()), sizing.max_tile_bytes < sizing.sram_per_tile
        (True, True)
        """
        return max(int(per_tile.max(initial=0)) for per_tile in self.tile_bytes)

    @property
    def fits(self) -> bool:
        """Whether every tile's memory fits its SRAM (else the program could be compiled, not run).

        Example:

        >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
        >>> config = configure_ipus(1)
        >>> model = keras.Model(*tutorial_model_fn())
        >>> model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        >>> sizing = ipu.utils.estimate(model, batch_size=32)
        >>> sizing.fits, ipu.utils.estimate(model, batch_size=4096).fits   # 4,096 images' activations do not
        (True, False)
        """
        return self.max_tile_bytes <= self.sram_per_tile

    def __str__(self) -> str:
        categories = ", ".join(
            f"{name} {nbytes / 2**20:,.1f} MiB"
            for name, nbytes in sorted(self.memory_by_category.items(), key=lambda item: -item[1])
        )
        verdict = "fits" if self.fits else "does NOT fit"
        return "\n".join(
            [
                f"{self.model_name} ({self.mode}): micro-batch {self.micro_batch}, {self.replicas} replica(s) of "
                f"{self.ipus_per_replica} IPU(s), accumulation {self.accumulation}, "
                f"{self.steps_per_execution} step(s) per execution",
                f"compile {self.compile_seconds:,.1f} s; {self.seconds_per_step * 1e3:,.3f} ms per step; "
                f"{self.samples_per_second:,.1f} samples/s",
                f"memory: fullest tile {self.max_tile_bytes:,} of {self.sram_per_tile:,} bytes ({verdict}); "
                f"{categories}",
            ]
        )


def estimate(model, batch_size: int, mode: str = "train") -> Estimate:
    """Returns the compile time, time per step, throughput and memory of ``model``'s program on the configured
    IPU system, without training it.

    The program is the one ``model.fit(..., batch_size=batch_size)`` (``mode="test"``: ``evaluate``,
    ``"predict"``: ``predict``) would compile now: ``batch_size`` is the micro-batch of one replica, and the
    replicas, pipeline stages, gradient accumulation and ``steps_per_execution`` come from the configuration and
    the model's options, as in ``fit``; the precision is the dtype policy the model was built under. The step
    is traced from shapes only, so sizing a ResNet-50 takes seconds, and a model built inside
    :func:`~ipu_teach.ipu.utils.shape_only_weights` (too big for the host's memory) can be sized too. A program
    that does not fit in the tiles' memory is still compiled: ``fits`` says so.

    Args:
      model: A built Keras model (compiled, for ``"train"`` and ``"test"``).
      batch_size: Integer, the micro-batch per replica.
      mode: ``"train"`` (default), ``"test"`` or ``"predict"``.

    Returns:
      An :class:`Estimate`.

    Raises:
      ValueError: for an unknown mode, a batch size that is not a positive integer or a model not yet built.
      RuntimeError: with no IPU system configured, or a model not compiled for ``"train"`` / ``"test"``.

    Example:

    >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
    >>> config = configure_ipus(1)
    >>> model = keras.Model(*tutorial_model_fn())
    >>> model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
    >>> sizing = ipu.utils.estimate(model, batch_size=32)
    >>> sizing.fits, sizing.replicas, sizing.micro_batch
    (True, 1, 32)
    >>> sizing.samples_per_second > 1000
    True
    """
    if mode not in MODES:
        raise ValueError(f"estimate: mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if not isinstance(batch_size, (int, np.integer)) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(
            f"estimate: batch_size must be a positive integer (the micro-batch per replica), got {batch_size!r}"
        )
    if not model.built:
        raise ValueError(
            f"estimate: model '{model.name}' is not built yet, so its input shape is unknown; give its first layer "
            "an input_shape (or build it from keras.Input) before sizing it"
        )
    if mode != "predict":
        model.assert_compiled(_CALLS[mode])
    configuration = executor.preparation.configured_system()
    samples = batch_size * model.steps_per_execution * configuration.num_ipus  # enough for any replica count
    x, y = _placeholder_data(model, samples, with_labels=mode != "predict")
    setup, _ = executor.prepare(model, mode, get_data_adapter(x, y, batch_size, what=_CALLS[mode]))
    executable, _ = executor.compile_executable(model, setup, shape_only=True, allow_out_of_memory=True)
    graphs = graphs_per_ipu(executable)  # one per pipeline stage
    mapping = setup.pipeline_plan.device_mapping if setup.pipeline_plan is not None else (0,)
    categories: dict = {}
    for graph in graphs:
        for category, nbytes in live_categories(graph).items():
            categories[category] = categories.get(category, 0) + nbytes
    per_ipu = [
        sum(graph.tile_memory() for graph, ipu in zip(graphs, mapping) if ipu == i) for i in range(max(mapping) + 1)
    ]
    return Estimate(
        model.name,
        mode,
        executable.graph.micro_batch,
        setup.replicas,
        setup.accumulation,
        len(per_ipu),
        setup.steps_per_execution,
        executable.compile_seconds,
        executable.seconds_per_execution,
        graphs[0].spec.sram_per_tile,
        tuple(per_ipu),
        categories,
        executable,
    )


def live_categories(graph) -> dict:
    """Bytes of each PopVision category live at the graph's fullest program step, over all its tiles (the
    always-live ones, and the not-always-live ones live at that step: what PopVision's liveness view shows at its
    peak), so that they add up to the IPU's peak (``memory_layout.ipu_peak``), not to every tensor's bytes."""
    steps = max(len(graph.steps), 1)

    def span(item) -> range:  # the steps an item is live in, cut to the program as bsp.allocated_per_tile cuts it
        first = min(max(item.live_from, 0), steps - 1)
        return range(first, min(max(item.live_until, first), steps - 1) + 1)

    live = np.zeros(steps, dtype=np.int64)
    for item in graph.memory:
        if not item.always_live:
            live[span(item).start : span(item).stop] += int(item.per_tile.sum())
    peak = int(live.argmax())
    categories: dict = {}
    for item in graph.memory:
        if item.always_live or peak in span(item):
            categories[item.category] = categories.get(item.category, 0) + int(item.per_tile.sum())
    return categories


def _placeholder_data(model, samples: int, with_labels: bool):
    """Inputs (and labels, in the shape each output's loss takes) of ``samples`` samples, one value's memory each."""
    input_shapes = model.input_shape if isinstance(model.input_shape, list) else [model.input_shape]
    dtypes = [input_value_dtype(t) for t in model.inputs] if model.inputs else [np.float32] * len(input_shapes)
    x = [placeholder((samples,) + tuple(shape[1:]), dtype) for shape, dtype in zip(input_shapes, dtypes)]
    if not with_labels:
        return (x if len(x) > 1 else x[0]), None
    output_shapes = model.output_shape if isinstance(model.output_shape, list) else [model.output_shape]
    losses = model.compiled_outputs.resolve(model).losses
    y = [
        placeholder((samples,) + tuple(_label_shape(loss, shape)[1:]))
        for loss, shape in zip(losses, output_shapes)
        if loss is not None
    ]
    return (x if len(x) > 1 else x[0]), (y if len(y) > 1 else y[0])


def _label_shape(loss, output_shape) -> tuple:
    """The labels' shape a loss takes (a loss function of the user's: the output's)."""
    return loss.label_shape(output_shape) if hasattr(loss, "label_shape") else tuple(output_shape)
