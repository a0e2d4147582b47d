"""How PopTorch's blocks become pipeline stages: ``Stage``, ``PipelinedExecution``, ``ShardedExecution``, and the
pipeline plan the simulated IPU costs (the one a Keras model with ``PipelineStage`` blocks gets).

Semantics from graphcore/poptorch: python/options.py (``Stage``, the execution strategies, the stage managers),
python/_options_impl.py (``IStageManager.beginStage``), popart_compiler/source/Compiler.cpp and CompilerImpl.cpp
(the number of pipeline stages and its rules), and the user guide's "Multi-IPU execution strategies":

- While the model is traced (its first call or ``compile()``), each block that begins (``BeginBlock``'s hook,
  ``with Block(...)``, ``Block.start``) gets a stage from the strategy: by default (``AutoStage.SameAsIpu``) the
  stage is its ``ipu_id``; with ``AutoStage.AutoIncrement`` one more per new block; with explicit stages (block
  ids or ``Stage(...)``, optionally ``.ipu(n)``) the stage's position. Its IPU is the Stage's, else the block's
  ``ipu_id``, else its stage number. Ops before the first block run on IPU 0; every op belongs to the block
  begun last.
- "Each time you switch IPU, PopTorch adds a new pipeline stage" (consecutive blocks on one IPU merge): a model
  on N forward stages trains through 2N - 1 pipeline stages, so ``gradientAccumulation`` must be at least that
  (and ``deviceIterations`` at least N in inference). Stage numbers must rise along the model.
- A replica takes the IPUs up to the highest ``ipu_id``; PopTorch reserves a power of two of IPUs in all, or
  fails unless ``Options.autoRoundNumIPUs(True)``.

The plan is :class:`ipu.pipelining.PipelinePlan`, the Keras path's: ``PipelinedExecution`` is costed with the
"PopTorch" schedule (Grouped's steps with PopTorch's accumulation rule, see ``pipeline.registry``),
``ShardedExecution`` with "Sequential" (one stage at a time, as sharding runs).

Example:

>>> from ipu_teach import poptorch
>>> strategy = poptorch.PipelinedExecution(poptorch.Stage("A", "B").ipu(0), poptorch.Stage("C").ipu(1))
>>> [(block, strategy.stage(block)._stage_id) for block in ("A", "B", "C")]
[('A', 0), ('B', 0), ('C', 1)]
"""

from __future__ import annotations

import contextlib
import dataclasses

from ..ipu.ops.pipelining_ops import PipelineSchedule
from ..ipu.pipelining import PipelinePlan
from ..session import OpenBlocks
from .enums import AutoStage
from .errors import Error


@dataclasses.dataclass(frozen=True)
class _Schedule:
    """A schedule of ``pipeline.registry`` by name, as a plan holds Keras' ``PipelineSchedule`` (its ``name``)."""

    name: str


_POPTORCH = _Schedule("PopTorch")


def check_ipu_id(ipu_id) -> None:
    """An ``ipu_id`` is None (not given) or an index of an IPU of the replica."""
    if ipu_id is not None and (isinstance(ipu_id, bool) or not isinstance(ipu_id, int) or ipu_id < 0):
        raise ValueError(f"ipu_id must be an integer >= 0 (an IPU of the replica), got {ipu_id!r}")


class Stage:
    """One or more blocks (by ``user_id``) running on one IPU (``.ipu(n)``), for an execution strategy."""

    def __init__(self, *block_ids: str) -> None:
        if not all(isinstance(b, str) for b in block_ids):
            raise AssertionError(f"Block IDs are supposed to be strings but got {block_ids}")
        self._blocks, self._stage_id, self._ipu = block_ids, -1, None

    @property
    def blocks(self) -> tuple:
        return self._blocks

    def ipu(self, ipu: int) -> Stage:
        """Run this stage on IPU ``ipu`` (of the replica)."""
        check_ipu_id(ipu)
        self._ipu = ipu
        return self


class PipelinedExecution:
    """Blocks run as pipeline stages on their IPUs, micro-batches overlapping (PopTorch's default strategy).

    ``PipelinedExecution()`` or ``PipelinedExecution(AutoStage.AutoIncrement)`` number the stages automatically;
    ``PipelinedExecution("A", "B")``, ``("A", ["B", "C"])`` or ``(Stage("A").ipu(0), ...)`` list them in order."""

    def __init__(self, *args):
        self.auto_stage, self._block_map = AutoStage.SameAsIpu, {}
        if len(args) == 1 and isinstance(args[0], AutoStage):
            self.auto_stage = args[0]
            return
        for stage_id, arg in enumerate(args):
            stage = arg if isinstance(arg, Stage) else Stage(arg) if isinstance(arg, str) else Stage(*arg)
            stage._stage_id = stage_id
            for block in stage.blocks:
                if block in self._block_map:
                    raise AssertionError(f"{block} associated with more than one stage")
                self._block_map[block] = stage

    def stage(self, block_id: str) -> Stage:
        """The Stage that block ``block_id`` belongs to (strategies that list their stages)."""
        if block_id not in self._block_map:
            raise AssertionError(f"Unknown block {block_id}")
        return self._block_map[block_id]


class ShardedExecution(PipelinedExecution):
    """Blocks run one after the other, each on its IPU, one micro-batch at a time (no overlap): costed with the
    Sequential schedule; no rule on the pipeline's depth.

    Example:

    >>> from ipu_teach import poptorch, torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
    >>> _ = poptorch.BeginBlock(net[1], ipu_id=1)
    >>> opts = poptorch.Options().setExecutionStrategy(poptorch.ShardedExecution())
    >>> model = poptorch.inferenceModel(net, opts)
    >>> _ = model(torch.zeros(2, 3))
    >>> model.get_ipu_executable().pipeline.schedule.name
    'Sequential'
    """


@dataclasses.dataclass
class BlockTrace:
    """The blocks begun while one step of a model was traced: where each starts in the tape and its stage and
    IPU (PopTorch's stage manager, ``IStageManager`` of python/_options_impl.py)."""

    strategy: PipelinedExecution
    tape: list
    starts: list = dataclasses.field(default_factory=lambda: [(0, "", -1, 0)])
    """(first op's index in the tape, block id, stage number, IPU): before any block, IPU 0."""
    next_auto_id: int = 0
    auto_stages: dict = dataclasses.field(default_factory=dict)

    def auto_id(self) -> str:
        self.next_auto_id += 1
        return str(self.next_auto_id - 1)

    def begin(self, user_id, ipu_id) -> None:
        check_ipu_id(ipu_id)
        user_id = user_id or self.auto_id()
        stage = self._stage(user_id, ipu_id)
        ipu = stage._ipu if stage._ipu is not None else ipu_id if ipu_id is not None else stage._stage_id
        self.starts.append((len(self.tape), user_id, stage._stage_id, ipu))

    def _stage(self, block_id, ipu_id) -> Stage:
        strategy = self.strategy
        if strategy._block_map:
            if block_id not in strategy._block_map:
                raise AssertionError(
                    f"Unknown Block '{block_id}' list of expected Blocks: {list(strategy._block_map.keys())}"
                )
            return strategy._block_map[block_id]
        if block_id not in self.auto_stages:
            stage = Stage(block_id)
            if strategy.auto_stage == AutoStage.SameAsIpu:
                if ipu_id is None:
                    raise AssertionError(
                        f"poptorch.AutoStage.SameAsIpu was selected but no IPU was specified for block {block_id}"
                    )
                stage._stage_id = ipu_id
            else:
                stage._stage_id = len(self.auto_stages) + 1
            self.auto_stages[block_id] = stage
        return self.auto_stages[block_id]


_traces = OpenBlocks()
"""The BlockTrace of the step being traced now (none: blocks do nothing, as PopTorch's on the CPU)."""


@contextlib.contextmanager
def tracing(strategy: PipelinedExecution, tape: list):
    """Collect the blocks begun inside (while one step's ops are recorded on ``tape``)."""
    with _traces.pushed(BlockTrace(strategy, tape)) as trace:
        yield trace


def begin_block(user_id, ipu_id) -> None:
    """A block begins (``Block.start``): the ops applied from now on are its own, while a step is traced."""
    check_ipu_id(ipu_id)
    if _traces:
        _traces[-1].begin(user_id, ipu_id)


def next_auto_id():
    """The next automatic block id (a ``BeginBlock`` without ``user_id``), None when nothing is traced."""
    return _traces[-1].auto_id() if _traces else None


def reset_auto_id() -> None:
    if _traces:
        _traces[-1].next_auto_id = 0


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where a traced step runs: its ops (renamed where one module's ops fall in two stages), the pipeline plan
    (None on one IPU) and the IPUs one replica takes."""

    ops: tuple
    plan: PipelinePlan | None
    ipus_per_replica: int


def layout(trace: BlockTrace, training: bool, recompute: bool = False) -> Layout:
    """The forward stages of ``trace``'s step: each run of ops on one IPU, in order (PopTorch merges consecutive
    blocks on the same IPU); refuses stage numbers that go back along the model."""
    bounds = trace.starts + [(len(trace.tape), None, None, None)]
    runs, previous = [], None  # runs: [ipu, [ops]]
    for (start, block, stage_id, ipu), (end, *_) in zip(trace.starts, bounds[1:]):
        if start == end:
            continue  # a block without ops (begun again at once, or empty)
        if previous is not None and stage_id < previous[1]:
            raise Error(
                f"Pipeline stages out of order: block {block!r} (stage {stage_id}, IPU {ipu}) runs after block "
                f"{previous[0]!r} (stage {previous[1]}); stage numbers must rise along the model. With the default "
                "poptorch.AutoStage.SameAsIpu the stage is the ipu_id: to come back to an IPU, use "
                "opts.setExecutionStrategy(poptorch.PipelinedExecution(poptorch.AutoStage.AutoIncrement))"
            )
        if block:
            previous = (block, stage_id)
        if runs and runs[-1][0] == ipu:
            runs[-1][1].extend(trace.tape[start:end])
        else:
            runs.append([ipu, list(trace.tape[start:end])])
    if not runs:
        return Layout(tuple(trace.tape), None, 1)
    mapping = tuple(ipu for ipu, _ in runs)
    stage_of_layer, ops = {}, []
    for stage, (_, run_ops) in enumerate(runs):
        for op in run_ops:
            seen = stage_of_layer.setdefault(op.scope, stage)
            if seen != stage:  # a module whose ops fall in two stages (the root's ops around a block)
                op = dataclasses.replace(op, scope=f"{op.scope}@stage{stage}")
                stage_of_layer[op.scope] = stage
            ops.append(op)
    if len(runs) == 1:
        return Layout(tuple(ops), None, max(mapping) + 1)
    schedule = PipelineSchedule.Sequential if isinstance(trace.strategy, ShardedExecution) else _POPTORCH
    plan = PipelinePlan(len(runs), mapping, max(mapping) + 1, stage_of_layer, schedule, recompute and training, None)
    return Layout(tuple(ops), plan, plan.ipus_per_replica)


def check_depth(plan: PipelinePlan | None, strategy, training: bool, accumulation: int, device_iterations: int):
    """PopTorch's rules for a pipeline's depth (popart_compiler/source/Compiler.cpp)."""
    if plan is None or isinstance(strategy, ShardedExecution):
        return
    forward = plan.stages
    if training and accumulation < 2 * forward - 1:
        raise Error(
            "poptorch.Options().Training.gradientAccumulation must be greater than or equal to the number of "
            f"pipeline stages ({2 * forward - 1}) when using poptorch.PipelinedExecution. Please note that a model "
            f"with {forward} pipeline stages in PopTorch will have an additional {forward - 1} stages when training."
        )
    if not training and device_iterations < forward:
        raise Error(
            "poptorch.Options().deviceIterations must be greater than or equal to the number of pipeline stages "
            f"({forward}) when using PopTorch.PipelinedExecution."
        )


def reserved_ipus(wanted: int, auto_round: bool) -> int:
    """The IPUs PopTorch reserves for ``wanted``: a power of two (CompilerImpl.cpp), rounding up only when asked."""
    rounded = 1 << (wanted - 1).bit_length()
    if rounded != wanted and not auto_round:
        raise Error(
            f"The model specifies the use of {wanted} IPUs, however PopTorch must reserve a minimum of {rounded} in "
            "order to allow the model to run, because PopTorch must reserve a power of 2 or maximum of 64 IPUs per "
            "process. Please reconfigure your model to use a different number of IPUs or set "
            "poptorch.Options().autoRoundNumIPUs(True)."
        )
    return rounded
