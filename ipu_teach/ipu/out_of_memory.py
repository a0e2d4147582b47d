"""The out-of-memory error of a lowered model: the worst tile, what fills it, and the usual cures."""

from __future__ import annotations

import numpy as np

from ..bsp import TileOutOfMemoryError

CURES = (
    "use a smaller micro-batch (batch_size)",
    "split the model over IPUs with pipelining (keras.ipu.PipelineStage)",
    "recompute activations in the backward pass (IPUConfig.allow_recompute = True, with pipelining or "
    "RecomputationCheckpoint layers: ipu.pipelining_ops.recomputation_checkpoint)",
    "let convolutions and matmuls use less temporary memory (available_memory_proportion: "
    "config.matmuls.poplar_options / config.convolutions.poplar_options = {'availableMemoryProportion': '0.3'}, "
    "default 0.6), at the price of more serial passes",
)


class ModelOutOfMemoryError(TileOutOfMemoryError):
    """Raised when a model compiled for the IPU needs more memory on a tile than its SRAM holds.

    Graphcore's compile fails the same way (in PopVision: a report with tiles over their memory). The
    message says what fills the fullest tile and the usual cures: a smaller micro-batch, pipelining,
    recomputation, or less temporary memory for matmuls and convolutions (``availableMemoryProportion``).
    It carries ``tile``, ``needed``, ``available``, the ``categories`` and ``variables`` on that tile and
    the lowered ``graph``, so a report can still be written (``debug.allowOutOfMemory``).

    Example:

    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 1
    >>> config.ipu_model.tiles_per_ipu = 4
    >>> config.configure_ipu_system()
    >>> with ipu.ipu_strategy.IPUStrategy().scope():
    ...     model = keras.Sequential([keras.layers.Dense(512, input_shape=(512,))])
    ...     model.compile("sgd", "mse")
    ...     try:
    ...         model.fit(np.zeros((32, 512), np.float32), np.zeros((32, 512), np.float32), verbose=0)
    ...     except ipu.ModelOutOfMemoryError as error:
    ...         print(f"tile {error.tile} needs {error.needed:,} of {error.available:,} bytes")
    tile 2 needs 649,065 of 638,976 bytes
    """

    def __init__(self, model_name, tile, needed, available, categories, variables, graph):
        self.model_name, self.categories, self.variables, self.graph = model_name, categories, variables, graph
        self.tile, self.needed, self.available, self.largest = tile, needed, available, variables
        cats = ", ".join(f"{name} {nbytes:,} B" for name, nbytes in categories)
        tensors = ", ".join(f"{name} ({nbytes:,} B)" for name, nbytes in variables)
        cures = "; ".join(f"({i}) {c}" for i, c in enumerate(CURES, start=1))
        MemoryError.__init__(
            self,
            f"Out of memory: model `{model_name}` needs {needed:,} bytes on tile {tile} but a tile has "
            f"{available:,} bytes of SRAM (over by {needed - available:,}). Largest categories on tile {tile}: "
            f"{cats}. Largest variables there: {tensors}. To fit: {cures}.",
        )


def breakdown(graph, tile: int):
    """(categories, variables) that fill ``tile`` when it is fullest, each a list of (name, bytes), largest
    first: its always-live items and the not-always-live ones live at its peak step (they add up to the bytes
    the tile needs; tensors live at other steps share that memory)."""
    peak = _peak_step(graph, tile)
    by_category: dict = {}
    variables = []
    for item in graph.memory:
        nbytes = int(item.per_tile[tile])
        if nbytes and (item.always_live or item.live_from <= peak <= item.live_until):
            by_category[item.category] = by_category.get(item.category, 0) + nbytes
            variables.append((item.name, nbytes))
    categories = sorted(by_category.items(), key=lambda kv: -kv[1])
    variables.sort(key=lambda kv: -kv[1])
    return categories, variables


def _peak_step(graph, tile: int) -> int:
    """The program step at which ``tile`` holds the most not-always-live bytes (ranges cut at the last step)."""
    steps = max(len(graph.steps), 1)
    live = np.zeros(steps + 1, dtype=np.int64)
    for item in graph.memory:
        if not item.always_live and item.per_tile[tile]:
            first = min(max(item.live_from, 0), steps - 1)
            live[first] += item.per_tile[tile]
            live[min(max(item.live_until, first), steps - 1) + 1] -= item.per_tile[tile]
    return int(np.argmax(np.cumsum(live[:-1])))


def find(model, graph) -> ModelOutOfMemoryError | None:
    """The error for the fullest tile when any tile needs more than its SRAM, else None."""
    total = graph.tile_memory()
    sram = graph.spec.sram_per_tile
    if total.max(initial=0) <= sram:
        return None
    tile = int(np.argmax(total))
    categories, variables = breakdown(graph, tile)
    return ModelOutOfMemoryError(model.name, tile, int(total[tile]), sram, categories[:3], variables[:3], graph)


def check(model, graph) -> None:
    """Raise ModelOutOfMemoryError when any tile needs more than its SRAM."""
    error = find(model, graph)
    if error is not None:
        raise error


class CannotRunOutOfMemoryError(ModelOutOfMemoryError):
    """An executable compiled with debug.allowOutOfMemory does not fit: it can be profiled, not run."""

    def __init__(self, error: ModelOutOfMemoryError):
        super().__init__(
            error.model_name, error.tile, error.needed, error.available, error.categories, error.variables, error.graph
        )
        self.args = (
            "The program was compiled with debug.allowOutOfMemory so its report shows the overflow, "
            "but it cannot run on the IPU. " + error.args[0],
        )
