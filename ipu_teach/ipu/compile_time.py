"""How long Poplar takes to compile a lowered program: from the size of the graph, not its compute sets alone.

What a Poplar compilation does, and what each part grows with:

- the framework builds and plans the graph, Poplar starts and the executable is loaded: a fixed part;
- for every compute set, each tile that works in it gets its vertices, their state and worklists, and the
  exchange code that brings their operands: a cost per *working tile-step* (compute set x working tile),
  summed over the IPUs of one replica;
- a convolution's or matrix product's vertex is connected to one tensor window per input-channel group,
  output-channel group and weights pair of them on its tile (poplibs lib/poplin/ConvVertices.cpp): each window
  is a field Poplar lays out and an exchange destination it schedules, costed as a vertex is. This is how a
  layer's weights enter the size: a wider layer has more channel groups per tile (the Poplar graph profile
  counts a graph's size in vertices, edges, variables and compute sets: "Poplar Profile Data", "Graph
  information");
- every tile of every IPU of a replica holds the control code of the whole program and takes part in each of
  its syncs, working or not: a cost per *program tile-step* (superstep x tile x IPU).

A loop the IPU runs as one program (an RNN's timesteps: Poplar's ``Repeat``) is compiled once: the steps of its
later iterations (``LoweredStep.compiled_earlier``) cost time to run, not to compile.

Replicas share one compiled graph (Poplar compiles a replicated graph once), so they add nothing; a pipeline
puts each stage on its own IPU, so its IPUs each hold the whole program's control code. The constants are in
``hardware.HostSpec``, with the figures they were fitted to (``benchmarks/fit_compile_time.py`` refits them).

Example:

>>> from ipu_teach import hardware
>>> from ipu_teach.ipu.compile_time import GraphSize
>>> round(hardware.HOST.compile_seconds(GraphSize(working_tile_steps=70_000, program_tile_steps=115_000)), 1)
18.6
>>> wider = GraphSize(working_tile_steps=70_000, program_tile_steps=115_000, tensor_windows=50_000)
>>> round(hardware.HOST.compile_seconds(wider), 1)
23.3
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import hardware


@dataclass(frozen=True)
class GraphSize:
    """The counts a compilation's work grows with (see the module docstring)."""

    working_tile_steps: int
    """Over every compute set of the replica's IPUs, the tiles that compute or receive data in it."""
    program_tile_steps: int
    """Supersteps of the program x tiles per IPU x IPUs of one replica."""
    tensor_windows: int = 0
    """Over every product of the replica's IPUs, the tensor windows its vertices connect, tile by tile."""


def graph_size(graph, stage_graphs=None) -> GraphSize:
    """The size of ``graph`` (a LoweredGraph) as Poplar compiles it; ``stage_graphs``, one per IPU of a pipeline.

    Example:

    >>> import numpy as np
    >>> import ipu_teach.keras as keras
    >>> from ipu_teach import ipu
    >>> from ipu_teach.examples import configure_ipus
    >>> from ipu_teach.ipu import compile_time
    >>> config = configure_ipus(1)
    >>> with ipu.ipu_strategy.IPUStrategy().scope():
    ...     model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
    ...     model.compile("sgd", "mse")
    ...     _ = model.fit(np.zeros((8, 4), np.float32), np.zeros((8, 2), np.float32), batch_size=8, verbose=0)
    INFO:ipu_teach:The model `sequential` has been configured with only 1 steps per execution. ...
    >>> graph = model.get_ipu_executable("train").graph
    >>> size = compile_time.graph_size(graph)
    >>> size.program_tile_steps == graph.compute_sets * graph.spec.tiles
    True
    """
    per_ipu = list(stage_graphs) if stage_graphs else [graph]
    steps = [step for g in per_ipu for step in g.steps if not step.compiled_earlier]
    working = sum(int(((step.cycles > 0) | (step.received > 0)).sum()) for step in steps)
    windows = sum(int(step.windows.sum()) for step in steps if step.windows is not None)
    compiled = sum(not step.compiled_earlier for step in graph.steps)
    return GraphSize(working, compiled * graph.spec.tiles * len(per_ipu), windows)


def compile_seconds(graph, stage_graphs=None, host: hardware.HostSpec = hardware.HOST) -> float:
    """Simulated seconds to compile ``graph`` (one LoweredGraph per pipeline stage in ``stage_graphs``).

    Example:

    >>> from ipu_teach import hardware
    >>> from ipu_teach.ipu.compile_time import GraphSize
    >>> host = hardware.HOST
    >>> small, big = GraphSize(10_000, 20_000), GraphSize(50_000, 200_000)
    >>> host.compile_base_s < host.compile_seconds(small) < host.compile_seconds(big)
    True
    """
    return host.compile_seconds(graph_size(graph, stage_graphs))
