"""Building a Report from a compiled executable: its lowered graph(s), its timeline, its configuration.

Nothing is estimated here: memory comes from the lowering's tile mapping (one graph per IPU of a
replica: the whole model, or one pipeline stage per IPU), execution from the BSP Engine's timeline.
"""

from __future__ import annotations

import numpy as np

from .report import Compilation, ComputeSet, Execution, ExecutionStep, Program, Report, StepIPU, Target, Variable

PROGRAM_TYPES = {
    "compute": "OnTileExecute",
    "exchange": "DoExchange",
    "host->device": "StreamCopy",
    "device->host": "StreamCopy",
    "ipu-link": "IPULinkCopy",
    "streaming memory": "StreamCopy",
    "host wait": "StreamCopyBegin",
}


def graphs_per_ipu(executable) -> list:
    """The lowered graph of each IPU of one replica."""
    return [executable.graph] if executable.pipeline is None else list(executable.pipeline.stage_graphs)


def build_report(model_name: str, mode: str, executable, configuration, options: dict | None = None) -> Report:
    """Returns the report of a compiled executable without writing a file: what ``auto_report`` writes and
    ``open_report`` reads back, for an executable at hand (``ipu.utils.estimate(...).executable``).

    Args:
      model_name: String, the model's name as the report shows it.
      mode: String, ``"train"``, ``"test"`` or ``"predict"``.
      executable: The compiled executable.
      configuration: The configured IPU system it was compiled for (``ipu.system.current()``).
      options: Dict or None, the engine options to record in the report.

    Returns:
      A ``Report``.

    Example:

    >>> from ipu_teach import profiling
    >>> from ipu_teach.examples import configure_ipus, tutorial_model_fn
    >>> config = configure_ipus(1)
    >>> model = keras.Model(*tutorial_model_fn())
    >>> model.compile("sgd", "categorical_crossentropy")
    >>> sizing = ipu.utils.estimate(model, batch_size=32)
    >>> report = profiling.build_report(model.name, "train", sizing.executable, ipu.system.current())
    >>> report.compilation.target.numIPUs, int(report.compilation.tile_memory(0).max()) == sizing.max_tile_bytes
    (1, True)
    """
    graphs = graphs_per_ipu(executable)
    spec = graphs[0].spec
    target = Target(
        spec.name,
        len(graphs),
        max(1, configuration.num_ipus // len(graphs)),
        spec.tiles,
        spec.sram_per_tile,
        spec.clock_hz,
    )
    variables = [
        Variable(
            m.name,
            m.category,
            ipu,
            np.asarray(m.per_tile, dtype=np.int64),
            bool(m.always_live),
            int(m.live_from),
            int(m.live_until),
        )
        for ipu, graph in enumerate(graphs)
        for m in graph.memory
    ]
    compute_sets = [
        ComputeSet(
            s.name,
            ipu,
            s.phase,
            int(s.flops),
            int((s.cycles > 0).sum()),
            int((s.cycles > 0).sum()) * spec.threads_per_tile,
            int(s.cycles.max(initial=0)),
            int(s.received.sum()),
        )
        for ipu, graph in enumerate(graphs)
        for s in graph.steps
    ]
    timeline = executable.timeline
    compilation = Compilation(
        target,
        variables,
        [[s.name for s in g.steps] for g in graphs],
        compute_sets,
        program_tree(timeline),
        np.stack([g.tile_memory() for g in graphs]),
    )
    return Report(
        model_name, mode, executable.key, compilation, execution_of(timeline, executable.graph), dict(options or {})
    )


def program_tree(timeline) -> Program:
    """The program as the engine ran it: Repeat nodes around the steps, in program order."""

    def nodes(items):
        for item in items:
            if isinstance(item, tuple):
                count, body = item
                yield Program("Repeat", f"Repeat x{count}", count, tuple(nodes(body)))
            else:
                yield Program(PROGRAM_TYPES.get(timeline.kinds[item], "Program"), timeline.labels[item])

    return Program("Sequence", "main", 1, tuple(nodes(timeline.schedule)))


def execution_of(timeline, graph) -> Execution:
    steps_by_name = {s.name: s for s in graph.steps}
    steps = []
    for r in range(timeline.rows):
        tile_cycles = timeline.tile_cycles(r)
        ipus = []
        for ipu in range(timeline.ipus):
            cycles = tile_cycles[ipu]
            top = int(cycles.max(initial=0))
            ipus.append(
                StepIPU(
                    ipu,
                    int(timeline.compute[r, ipu]),
                    int(timeline.sync[r, ipu]),
                    int(timeline.exchange[r, ipu]),
                    int((cycles > 0).sum()),
                    float(cycles.mean() / top) if top else 0.0,
                )
            )
        label = timeline.labels[r]
        lowered = steps_by_name.get(label)
        steps.append(
            ExecutionStep(
                label,
                timeline.kinds[r],
                int(timeline.counts[r]),
                tuple(ipus),
                int(lowered.flops) if lowered is not None else 0,
                _bytes_moved(r, timeline.kinds[r], lowered, timeline),
            )
        )
    return Execution(steps, timeline.schedule, timeline.tile_busy.copy(), timeline.spec.clock_hz, timeline.spec.name)


def _bytes_moved(row, kind, lowered, timeline) -> int:
    """Bytes one execution of a step moves: a superstep's exchange on one IPU, a host stream to one IPU, an
    all-reduce step's slices over all the replicas' IPU-Links (as the engine moved them)."""
    if lowered is not None:
        return int(lowered.received.sum())
    if kind in ("host->device", "device->host"):
        return int(timeline.moved_bytes[row].max(initial=0))
    if kind == "ipu-link":
        return int(timeline.moved_bytes[row].sum())
    return 0
