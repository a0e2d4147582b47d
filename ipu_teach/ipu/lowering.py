"""Lowering: a Keras model becomes a simulated IPU program, op by op, through the cost model.

The model runs once on a real batch while ``autograd.record()`` listens (or, compiling without running or
sizing a model, its step is traced from shapes alone, :mod:`.shape_only`: the same records, no numerics);
every op it applies states its FLOPs, bytes, matrix products and vector work. Each op becomes several BSP supersteps,
as Poplar lowers it to several compute sets: each matrix product its rearrangement, the product on
the tiles' matrix units and the reduction of split sums (:mod:`.matrix_plan`); each element-wise
pass one compute set on the vector units, on the tiles its output is mapped to (linearly, at least
128 bytes a tile: a small tensor leaves most tiles idle); each reduction a compute set per stage. Inputs a tile does
not hold (operand slices, a broadcast bias, partial sums) arrive by exchange. Weights, optimizer
state, activations and code are laid out on the tiles by :mod:`.memory_layout`; the most a tile
needs at once is where the out-of-memory error comes from. Nothing here is measured on the host:
cycles and bytes follow from shapes and the hardware spec alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import bsp, hardware
from ..autograd import record
from ..autograd.cost import OpCost, Reduction, VectorPass, elementwise
from ..keras.engine import call_context, step_overrides
from . import matrix_plan, memory_layout, offloading, popart_program, recomputation, tile_placement
from . import shape_only as shape_only_trace
from .memory_layout import TEMPORARY, MemoryItem

REDUCE_PARTIAL_BYTES = 4
"""Bytes of one partial sum a reduction exchanges between its stages: popops reduces in float, also for fp16."""


@dataclass
class LoweredStep:
    """One superstep of the program: its name, phase and per-tile compute and exchange."""

    name: str
    phase: str
    flops: int
    cycles: np.ndarray
    received: np.ndarray
    output_bytes: int = 0
    temporary: np.ndarray | None = None
    """Per tile, the temporary memory a matrix product needs while it runs (on its main step only)."""
    unit: str = "vector"
    """Which of the tiles' units computes it: ``"AMP"`` (the matrix unit, a product's main step) or ``"vector"``."""
    windows: np.ndarray | None = None
    """Per tile, the tensor windows its convolution vertex connects (a product's main step only:
    ``matrix_plan.vertex_windows``); other vertices connect a few fixed operands each."""
    messages: np.ndarray | None = None
    """Per tile, the messages (a region from one sender) its exchange receives, where the plan knows them (a
    product's rearrangement and reductions); else :mod:`.memory_layout` estimates them from the bytes."""
    sends: np.ndarray | None = None
    """Per tile, the messages its exchange sends where the plan knows them (a product's rearrangement, whose
    pieces are each broadcast once to the tiles sharing them); else estimated from the messages received."""
    outlined: tuple | None = None
    """Which step of which outlined op this is, where Poplar compiles the op as a function that identical ops
    call (:data:`OUTLINED_OPS`): the op's kind, shapes and dtype, phase, costs and options, and the step's place
    in it; else None."""
    first_tile: int = 0
    """The tile the linear mapping of the op's output starts on (:mod:`.tile_placement`): where its vector work
    runs and its activation (and gradient) is laid out; 0 for an op with a matrix product, as poplin starts it."""
    compiled_earlier: bool = False
    """A step of a loop iteration after the first (``OpRecord.repeats_earlier``): Poplar compiled its code with
    the first iteration's, so it adds nothing to the compile time."""
    streamed_bytes: int = 0
    """Bytes a weight update copies from Streaming Memory before it and back after it (its optimizer state,
    offloaded: :mod:`.offloading`)."""
    channel_tiles: int = 0
    """Tiles the outputs of one output channel of a product's result end on (its main step only,
    :func:`.matrix_plan.channel_tiles`): where a bias added to them is laid out."""
    codelet: str = ""
    """The popops codelet an element-wise pass runs (``"add"``, ``"relu"``: ``autograd.cost.VectorPass``), whichever
    op it belongs to; empty for other steps, whose codelet :func:`.memory_layout.codelet_of` reads from the name."""

    @property
    def scope(self) -> str:
        """The layer the op belongs to (``loss`` and ``optimizer`` for the rest)."""
        return self.name.split("/", 1)[0]

    def program(self):
        """An on-chip superstep: replicas run the same program, each IPU syncing its own tiles; between copies
        from and to Streaming Memory if it streams its operands (``streamed_bytes``)."""
        exchange = bsp.Exchange(self.received, name=f"{self.name}/exchange") if self.received.any() else None
        step = bsp.ComputeSuperstep(bsp.CostedComputeSet(self.name, self.cycles), exchange, sync=bsp.SyncKind.ON_CHIP)
        if not self.streamed_bytes:
            return step
        load = bsp.StreamingMemoryCopy(self.streamed_bytes, label=f"{self.name}/load")
        store = bsp.StreamingMemoryCopy(self.streamed_bytes, label=f"{self.name}/store")
        return bsp.Sequence([load, step, store], label=self.name)


@dataclass
class LoweredGraph:
    """The lowered program of one mode (train / test / predict) for one micro-batch size."""

    mode: str
    spec: hardware.IPUSpec
    micro_batch: int
    forward: list
    backward: list
    update: list
    memory: list
    signature: list = field(default_factory=list)
    input_bytes: int = 0
    output_bytes: int = 0
    gradient_bytes: list = field(default_factory=list)
    gradient_layers: list = field(default_factory=list)
    """The layer of each gradient of ``gradient_bytes`` (a pipeline stage all-reduces its own layers' only)."""
    result_bytes: int = 0
    """Bytes the execution returns to the host once, after its steps (a custom loop's return value)."""
    itemsizes: list = field(default_factory=list)
    """Bytes per value of each recorded op (4 in fp32, 2 in fp16): the program's precision."""

    @property
    def steps(self) -> list:
        return self.forward + self.backward + self.update

    @property
    def compute_sets(self) -> int:
        return len(self.steps)

    def tile_memory(self) -> np.ndarray:
        """Bytes per tile the program needs, what must fit in SRAM: the always-live items plus the peak of the
        not-always-live ones (tensors never live at the same step share memory, as Poplar allocates them)."""
        return memory_layout.allocated(self.memory, len(self.steps), self.spec.tiles)


OUTLINED_OPS = ("BatchNorm", "LayerNorm", "GroupNorm")
"""Ops besides products (convolutions, matrix multiplies) that Poplar compiles once as a function every identical
one calls: Graphcore's TensorFlow outlines convolutions, dots, batch and group (layer) norms, their gradients and
weight updates so (tensorflow/compiler/plugin/poplar/driver/passes/outline_instructions.cc@b2127bb,
IsInstructionCacheable; the SubcomputationGraphCache compiles each distinct one once), PopART likewise
(SessionOptions enableOutlining and enableConvolutionGraphCaching, both on by default)."""


def _vector_steps(name, phase, work, spec, itemsize, flops=0, output_bytes=0, start=0, bias_tiles=0) -> list:
    """The compute sets of one item of an op's vector work (``autograd.cost``): a VectorPass is one compute set
    of its codelet, a Reduction several (see :func:`_reduction_steps`). The first is named ``name``; the work
    starts on tile ``start``, where the op's output is mapped. ``bias_tiles``: the pass adds a bias laid out for it
    over the tiles each output channel of the product is on (:func:`.matrix_plan.channel_tiles`)."""
    if isinstance(work, Reduction):
        return _reduction_steps(name, phase, work, spec, flops, output_bytes, start)
    # popops runs an element-wise vertex on each tile its output is mapped to (lib/popops/ElementWise.cpp), and
    # that output is mapped linearly in grains, at least 128 bytes a tile: a small tensor works on few tiles
    per_tile = memory_layout.mapped_bytes(work.elements, itemsize, spec.tiles, start) // itemsize
    rate = hardware.VECTOR.cycles_per_element(work.codelet, itemsize)
    cycles = _vertex_cycles(per_tile, rate, hardware.VECTOR.elementwise_vertex_cycles)
    # a broadcast operand (a bias) is mapped elsewhere: each tile first receives the part its elements use; so do
    # operands the pass reads in its own layout (gathered), in proportion to its elements there
    received = np.minimum(per_tile, work.broadcast) * itemsize
    if work.broadcast and bias_tiles:
        # laid out for the add: each channel's bias sits on one of the bias_tiles tiles holding its outputs, so a tile
        # receives the part of its channels' bias the others hold, and none where each channel is on one tile (a lower
        # bound for a matmul's bias: createBroadcastOperand merges the overlapping tile sets of neighbouring channels
        # and spreads their bias over the union, poputil TileMapping.cpp)
        received = bsp.ceil_div(received * (bias_tiles - 1), bias_tiles)
    if work.gathered:
        received = received + bsp.ceil_div(per_tile * work.gathered, max(1, work.elements)) * itemsize
    step = LoweredStep(name, phase, int(flops), cycles, received, output_bytes, first_tile=start, codelet=work.codelet)
    return [step]


def _vertex_cycles(elements_per_tile, cycles_per_element, vertex_cycles) -> np.ndarray:
    """Cycles of a vector compute set on each tile: its elements at the codelet's rate plus the vertex's fixed
    cost, on the tiles that have any (the others sit the compute set out)."""
    return np.where(
        elements_per_tile > 0, np.ceil(elements_per_tile * cycles_per_element).astype(np.int64) + vertex_cycles, 0
    )


def _reduce_cycles(inputs_per_tile) -> np.ndarray:
    """Cycles of a reduce compute set: each tile with inputs reduces them (popops' reduce vertices)."""
    return _vertex_cycles(inputs_per_tile, hardware.VECTOR.reduce, hardware.VECTOR.reduce_vertex_cycles)


def _reduction_steps(name, phase, work, spec, flops=0, output_bytes=0, start=0) -> list:
    """``popops::reduce`` as poplibs plans it (lib/popops/reduction/ReductionStages.cpp): each tile first
    reduces the values it holds to partials, with no exchange; then, while more than ``reduce_stage_factor``
    partials per output are left, an intermediate stage exchanges them in groups of sqrt(partials per output)
    to reducing tiles; a last stage exchanges what is left to the outputs' tiles and reduces it. Every stage
    is a compute set, and each after the first an exchange of float partials (4 bytes). The op's tensors are
    laid out from tile ``start``; an intermediate stage's results start at popops' hashed offset of their
    shape (:func:`.tile_placement.reduction_offset`)."""
    per_tile = memory_layout.spread(work.elements, spec.tiles, start)
    steps = [
        LoweredStep(
            name,
            phase,
            int(flops),
            _reduce_cycles(per_tile),
            np.zeros(spec.tiles, np.int64),
            output_bytes,
            first_tile=start,
        )
    ]
    partials = int(np.minimum(per_tile, work.outputs).sum())  # each tile's values touch at most every output
    stage = 1
    while partials > work.outputs:
        if partials > work.outputs * hardware.VECTOR.reduce_stage_factor:
            group = math.isqrt(bsp.ceil_div(partials, work.outputs) - 1) + 1  # ceil(sqrt(partials per output))
            remaining = bsp.ceil_div(partials, group)
        else:
            remaining = work.outputs
        at = start if remaining == work.outputs else tile_placement.reduction_offset((remaining,), spec.tiles)
        partials_per_output = bsp.ceil_div(partials, remaining)  # each from another tile
        inputs = memory_layout.spread(remaining, spec.tiles, at) * partials_per_output
        steps.append(
            LoweredStep(
                f"{name}/stage{stage}",
                phase,
                0,
                _reduce_cycles(inputs),
                inputs * REDUCE_PARTIAL_BYTES,
                messages=np.where(inputs > 0, partials_per_output, 0),
                first_tile=start,
            )
        )
        partials, stage = remaining, stage + 1
    return steps


def _transpose_cycles(regrouped: np.ndarray, itemsize: int) -> np.ndarray:
    """The rearrangement compute set before a backward product: the pass transposes (and, for a convolution's
    data gradient, flips) its operands (poplin's ConvProgramTree: ``weightsTranspose`` "if this is for the
    backwards pass", ``transposeCSActs`` / ``transposeCSWeights``). Poplar transposes the operands on the tiles
    their regroup copied them to (``regrouped``, :func:`_regroup_bytes`): popops' ``addTransposeVertices`` maps
    each Transpose vertex by the tile mapping of that copy (lib/popops/Rearrange.cpp), so every element of the
    operands is moved once, spread over the tiles, not once per tile that then receives a copy of it, and as stored
    (a convolution's activations, not their view with every kernel position: ``MatrixProduct.transposed_elements``)."""
    return _vertex_cycles(regrouped // itemsize, hardware.VECTOR.transpose, hardware.VECTOR.transpose_vertex_cycles)


def _regroup_bytes(product, spec, itemsize) -> np.ndarray:
    """Per tile, the bytes of a product's operands read as transposed views (a backward product's, ``MatrixProduct.
    transposed_elements``) that popops' ``regroupTensor`` copies there to be transposed: its copy is spread over
    the IPU's tiles ("spread across all tiles", lib/popops/Rearrange.cpp@7eac0f2, regroupTensorInternal, then
    ``copies.emplace_back(grouped, preRegroup)``), an exchange of its own before the transpose, whose result the
    product's rearrangement then copies to the plan's layout. Taken as a linear mapping of the operands as stored."""
    return memory_layout.mapped_bytes(product.transposed_elements, itemsize, spec.tiles)


def _rearrange_step(label, phase, elements, chosen, spec, itemsize) -> LoweredStep:
    """The copy of ``elements`` of a product's operands into its plan's layout (named ``.../rearrange``,
    :func:`.matrix_plan.rearranged_elements`): an exchange of its own, no compute, each element moved once from where
    it was made (spread over the IPU) to its share of the plan's tiles, which hear from the pieces their share lies
    across."""
    used = chosen.tiles
    received = matrix_plan.per_tile(bsp.ceil_div(elements * itemsize, used), used, spec)
    incoming, outgoing = memory_layout.relayout_messages(
        received, memory_layout.mapped_bytes(elements, itemsize, spec.tiles)
    )
    zeros = np.zeros(spec.tiles, np.int64)
    return LoweredStep(f"{label}/rearrange", phase, 0, zeros, received, messages=incoming, sends=outgoing)


def _product_steps(name, phase, product, spec, itemsize, output_bytes, options) -> list:
    """The compute sets one matrix product lowers to (see :mod:`.matrix_plan`): the operands' rearrangement
    (an exchange; before it, the copy of operands read as transposed views, a backward product's, to the tiles that
    transpose them, ``regroup``, and the copy of those and of any operand broadcast to many tiles into the plan's
    layout, ``rearrange``; the transpose runs in the rearrangement's compute set),
    the convolution on the AMP and, if the depth is split,
    the reduction of the partials in one to three stages (``reduce``, ``reduce1``, ``reduce2``: poplin's
    ``Reduce<i>``); all of them once per serial pass (later passes named ``.../serialK/...``)."""
    original = product
    product, chosen = matrix_plan.choose(product, spec, itemsize, options)
    used = chosen.tiles
    rearranged = matrix_plan.rearranged_elements(product, chosen)
    channel_tiles = matrix_plan.channel_tiles(original, product, chosen)  # every serial pass's outputs alike
    steps = []
    for k in range(chosen.serial_split):
        label = name if k == 0 else f"{name}/serial{k}"
        received = matrix_plan.per_tile(chosen.transform_bytes, used, spec)
        messages = matrix_plan.per_tile(matrix_plan.transform_messages(product, chosen, itemsize), used, spec)
        sends = matrix_plan.per_tile(matrix_plan.transform_sends(product, chosen, itemsize), used, spec)
        # before the serial loop (transformPreSerial), on the first pass only: operands read as transposed views (a
        # backward product's) are regrouped (an exchange, no compute) and transposed (weightsTranspose); they and
        # operands broadcast to many tiles are then copied into the plan's layout. Every pass then receives its
        # slices (the exchange alone on later passes)
        transpose = np.zeros(spec.tiles, np.int64)
        if product.transposed_elements and k == 0:
            regrouped = _regroup_bytes(product, spec, itemsize)
            steps.append(LoweredStep(f"{label}/regroup", phase, 0, np.zeros(spec.tiles, np.int64), regrouped))
            transpose = _transpose_cycles(regrouped, itemsize)
        if rearranged and k == 0:
            steps.append(_rearrange_step(label, phase, rearranged, chosen, spec, itemsize))
        steps += [
            LoweredStep(f"{label}/transform", phase, 0, transpose, received, messages=messages, sends=sends),
            LoweredStep(
                label,
                phase,
                product.flops // chosen.serial_split,
                matrix_plan.per_tile(chosen.compute_cycles, used, spec),
                np.zeros(spec.tiles, np.int64),
                output_bytes if k == 0 else 0,
                matrix_plan.per_tile(chosen.temporary_bytes, used, spec) if k == 0 else None,
                unit="AMP",
                windows=matrix_plan.per_tile(chosen.windows, used, spec),
                channel_tiles=channel_tiles,
            ),
        ]
        for number, stage in enumerate(chosen.reduce_stages):
            steps.append(
                LoweredStep(
                    f"{label}/reduce{number or ''}",
                    phase,
                    0,
                    matrix_plan.per_tile(stage.cycles, stage.tiles, spec),
                    matrix_plan.per_tile(stage.received, stage.tiles, spec),
                    messages=matrix_plan.per_tile(stage.messages, stage.tiles, spec),
                )
            )
    return steps


def _steps_for(
    name, phase, cost, spec, itemsize, output_bytes=0, options=matrix_plan.DEFAULT_OPTIONS, start=0, bias_tiles=0
) -> list:
    """The compute sets of one op's forward or backward: each matrix product's (the first one's main step
    carries ``name``), then the vector work, from tile ``start`` (:func:`_output_start`); nothing for a view
    such as Reshape. A pass adding the op's bias (``VectorPass.bias``) has it laid out on its last product's
    output; ``bias_tiles`` lays out the broadcast operand of an op that adds a bias to the op before it (a
    framework's fused bias add, :func:`_fused_bias_tiles`)."""
    if cost.flops == 0:
        return []
    steps = []
    for j, product in enumerate(cost.products):
        steps += _product_steps(
            name if j == 0 else f"{name}/product{j}",
            phase,
            product,
            spec,
            itemsize,
            output_bytes if j == 0 else 0,
            options,
        )
    own_bias_tiles = _channel_tiles_of(steps)
    seen = {}
    for k, work in enumerate(cost.vector):
        label = work.codelet if isinstance(work, VectorPass) else "reduction"
        seen[label] = seen.get(label, 0) + 1
        first = not steps  # an op without products: its first vector step carries its name and output
        steps += _vector_steps(
            name if first else f"{name}/{label}{seen[label] if seen[label] > 1 else ''}",
            phase,
            work,
            spec,
            itemsize,
            cost.vector_flops if k == 0 else 0,  # the FLOPs a profile shows, on the op's first vector step
            output_bytes if first else 0,
            start,
            own_bias_tiles if isinstance(work, VectorPass) and work.bias else bias_tiles,
        )
    return steps


def _fused_bias_tiles(tape, steps_per_op, i) -> int:
    """Where Graphcore's TensorFlow fuses op ``i`` of ``tape`` with the product before it into the product with its
    bias add, the tiles each output channel of the product is on, over which the bias is laid out for the add
    (:func:`.matrix_plan.channel_tiles`); else 0 (``steps_per_op``: each op's lowered forward steps). XLA's
    ``matmul_biasadd`` fusion adds a vector along the last axis to a dot's output in place, its bias allocated by
    ``poputil::createBroadcastOperand`` on the output's tile mapping (graphcore/tensorflow
    ``driver/ops/custom_ops/popops/fusions.cc``, MatMulBiasAddOp): a Dense layer's bias, also cast to fp16 first under
    mixed precision (the pattern takes any 1-D operand, ``passes/fuse_ops_late.cc``, and the allocation passes through
    a convert). A 3-D Dense input (a reshape between dot and add) is not that fusion, but Graphcore's TensorFlow lays
    out the vector operand of an element-wise add on its other operand all the same (``implicit_binary`` ops,
    ``ops/custom_ops/popops/elementwise.cc``). PopART adds a PopTorch Linear's bias with a plain Add (poptorch
    ``linearHandler``), whose broadcast operand it does not lay out (``ElementWiseBinaryOpx``: a dead end), so no
    fusion there."""
    rec, j = tape[i], i - 1
    while j >= 0 and tape[j].op == "Cast" and tape[j].scope == rec.scope and len(tape[j].output_shape) == 1:
        j -= 1  # the bias cast to the compute dtype
    if j < 0:
        return 0
    before = tape[j]
    adds_bias = (
        rec.op == "Add"
        and before.scope == rec.scope
        and len(rec.input_shapes) == 2
        and tuple(rec.input_shapes[0]) == tuple(before.output_shape)
        and tuple(rec.input_shapes[1]) == tuple(before.output_shape[-1:])
    )
    return _channel_tiles_of(steps_per_op[j]) if adds_bias else 0


def _channel_tiles_of(steps) -> int:
    """The tiles each output channel of the last matrix product among ``steps`` ends on (its main step's
    ``channel_tiles``), 0 without one."""
    return next((step.channel_tiles for step in reversed(steps) if step.unit == "AMP"), 0)


def _popart_work(rec, training_loss: bool) -> tuple[tuple, tuple]:
    """What PopART's program runs for ``rec`` beside the op's own compute sets, ``(forward, backward)`` named vector
    work: its Nll's for a loss op PopTorch hands it as one (:data:`.popart_program.NLL_LOSS_OPS`, over its logits'
    samples and classes) and, for the training step's last op (``training_loss``: the loss, which a PopTorch
    model's step computes last), the IdentityLoss PopTorch puts after every loss."""
    forward, backward = (), ()
    if rec.op in popart_program.NLL_LOSS_OPS:
        logits = rec.input_shapes[0]
        forward, backward = popart_program.nll_ignore_index_work(int(np.prod(logits[:-1])), int(logits[-1]))
    if training_loss:
        identity_forward, identity_backward = popart_program.identity_loss_work()
        forward, backward = forward + identity_forward, identity_backward + backward
    return forward, backward


def _named_work_steps(label, phase, named_work, spec, itemsize, start) -> list:
    """The compute sets of ``(name, vector work)`` pairs, each named ``label/name``, from tile ``start``."""
    return [
        step
        for name, work in named_work
        for step in _vector_steps(f"{label}/{name}", phase, work, spec, itemsize, start=start)
    ]


def _output_start(rec, spec, mapper) -> int:
    """The tile an op's output starts on: where poplin starts the plan for an op with a matrix product, else the
    next tile of the graph's linear mapper (:mod:`.tile_placement`); a view (no work, such as Reshape) allocates
    nothing and leaves the mapper where it was."""
    if rec.forward.products or rec.forward.flops == 0:
        return tile_placement.PRODUCT_START_TILE
    return mapper.take(memory_layout.mapped_bytes(int(np.prod(rec.output_shape)), rec.itemsize, spec.tiles))


def split_by_stage(
    graph: "LoweredGraph",
    stage_of_layer: dict,
    stash: list,
    input_stash: list | None = None,
    input_bytes: list | None = None,
) -> list:
    """One LoweredGraph per pipeline stage: its steps (its weights' updates included), its weights, its
    activations times the number of micro-batches the schedule stashes on it (``stash[s]``), and its own code.
    With recomputation a stage keeps one micro-batch's activations (``stash[s]`` 1) and stashes
    ``input_stash[s]`` copies of its input of ``input_bytes[s]`` bytes, from which it recomputes them."""
    last = max(stage_of_layer.values())
    input_stash = input_stash or [0] * (last + 1)

    def stage_of(name):
        return stage_of_layer.get(name.split("/", 1)[0], last)

    stages = []
    for s in range(last + 1):
        picked = [k for k, step in enumerate(graph.steps) if stage_of(step.name) == s]
        pick = [graph.steps[k] for k in picked]
        memory = [
            replace(
                m,
                per_tile=m.per_tile
                * (stash[s] if m.category == "activations" else 1)
                * _stashed_with_inputs(m, input_stash[s]),
                live=None if m.live is None else _steps_within(picked, *m.live),
            )
            for m in graph.memory
            if m.category not in hardware.CODE_CATEGORIES + (TEMPORARY,) and stage_of(m.name) == s
        ]
        if input_stash[s]:
            memory.append(
                MemoryItem(
                    f"stage{s}/stashed inputs",
                    "activations",
                    memory_layout.spread(input_bytes[s], graph.spec.tiles) * input_stash[s],
                )
            )
        stages.append(
            LoweredGraph(
                graph.mode,
                graph.spec,
                graph.micro_batch,
                [p for p in pick if p.phase == "forward"],
                [p for p in pick if p.phase in ("backward", recomputation.RECOMPUTE)],  # as graph.backward
                [p for p in pick if p.phase in ("accumulate", "update")],
                memory
                + memory_layout.temporary_memory(pick, graph.spec)
                # a stage's host streams: its own variables' (its share of the data streams left out)
                + memory_layout.code_memory(pick, graph.spec, memory_layout.host_streams(memory, graph.spec)),
            )
        )
    return stages


def _stashed_with_inputs(item, input_stash: int) -> int:
    """How many copies of ``item`` a recomputing stage keeps: a recomputation checkpoint's output (``.../checkpoint``,
    :mod:`.recomputation`) is stashed for each micro-batch in flight, as the stage's input is; the rest once."""
    return input_stash if input_stash and item.name.endswith(f"/{recomputation.CHECKPOINT}") else 1


def _steps_within(picked: list, first: int, last: int) -> tuple:
    """A live range of the whole program, ``first`` to ``last``, as indices into the ``picked`` steps of one
    stage (ascending indices of the whole program): from the first picked step at or after ``first`` to the
    last one at or before ``last``."""
    start = int(np.searchsorted(picked, first, side="left"))
    end = int(np.searchsorted(picked, last, side="right")) - 1
    return start, max(start, end)


def arrays_of(data) -> list:
    """The arrays of a model's inputs or labels: one, or one per input or output (a list, tuple or dict)."""
    if isinstance(data, dict):
        return [data[name] for name in sorted(data)]
    if isinstance(data, (list, tuple)) and data and all(hasattr(item, "shape") for item in data):
        return list(data)
    return [data]


def batch_size_of(x) -> int:
    """Samples in a batch of a model's inputs (the first input's, for a model of several)."""
    return len(arrays_of(x)[0])


def _host_itemsize(array) -> int:
    """Bytes per streamed value: a float or integer input at its own size (fp16 data streams half the bytes, 8-bit
    images a quarter), 64-bit integers as 4 (the IPU has none), others as 4."""
    dtype = np.asarray(array).dtype
    return dtype.itemsize if dtype.kind == "f" else min(dtype.itemsize, 4) if dtype.kind in "iu" else 4


def _per_weight_steps(weights, phase, what, flops_per_weight, spec, starts, reads_gradient=True) -> list:
    """One compute set per weight tensor, as each variable's update (or accumulation) is its own op in
    TensorFlow: small tensors leave most tiles idle and pay a sync each. Each value costs one ScaledAdd element
    per 2 of its FLOPs (a multiply-add), at least one (an accumulation's add). Each runs where its weight is
    (``starts``, :func:`.memory_layout.weight_starts`), its exchange first bringing the gradient there if it
    ``reads_gradient`` (:func:`with_gradient_arrival`; an update after an accumulation reads the accumulator)."""
    steps = []
    for w in weights:
        (work,) = elementwise("scaled_add", bsp.ceil_div(flops_per_weight, 2) * int(w.size))
        (step,) = _weight_step(w, what, phase, work, flops_per_weight * int(w.size), spec, starts)
        steps.append(with_gradient_arrival(step, w, spec) if reads_gradient else step)
    return steps


def with_gradient_arrival(step: LoweredStep, weight, spec) -> LoweredStep:
    """``step``, the first compute set that reads a weight's gradient on the weight's tiles, with the gradient's copy
    there added to its exchange. The product that made the gradient left it in its own plan's layout, spread over
    the IPU from the plan's start tile, not in the weight's: poplin's weight update computes the deltas by the
    weight-update plan, then adds them by the weights' tile mapping (lib/poplin/Convolution.cpp@7eac0f2,
    convolutionWeightUpdate: calculateWeightDeltas, then scaledAddTo; lib/popops/ScaledAdd.cpp maps its vertices by
    the first operand's tiles, so the deltas each vertex reads are exchanged to it first). A weight tile hears
    from the gradient's tiles its slice lies across (:func:`.memory_layout.relayout_messages`), and from the tile
    holding an optimizer value the step is scaled by, if any (``step.received`` already: one message)."""
    itemsize = weight.dtype.itemsize
    at_weight = memory_layout.mapped_bytes(weight.size, itemsize, spec.tiles, step.first_tile)
    made = memory_layout.mapped_bytes(weight.size, itemsize, spec.tiles, tile_placement.PRODUCT_START_TILE)
    incoming, outgoing = memory_layout.relayout_messages(at_weight, made)
    scalar = step.received > 0
    if scalar.any():  # the optimizer value, on the weight's first tile, broadcast in one message
        outgoing = outgoing + (np.arange(spec.tiles) == step.first_tile)
    return replace(step, received=step.received + at_weight, messages=incoming + scalar, sends=outgoing)


def _weight_step(weight, what, phase, work, flops, spec, starts) -> list:
    """The compute set of one vector ``work`` on ``weight`` (named ``<weight>/<what>``), where the weight is."""
    name = f"{weight.name.rsplit(':', 1)[0]}/{what}"
    return _vector_steps(name, phase, work, spec, weight.dtype.itemsize, flops, start=starts[weight.name])


def _popart_update_steps(weights, passes, flops_per_weight, spec, starts, reads_gradient=True) -> list:
    """PopART's update of each weight (:func:`.popart_program.weight_update_passes`): a compute set per popops call
    of its ops, on the weight's tiles (the negated learning rate on one), the update's FLOPs on its first. A pass
    scaled by an optimizer value held as a tensor first sends that value to every tile of the weight; a fused map
    expression's vertex does its codelet's per-element work ``update.fused`` times, at one vertex's fixed cost: the
    fixed cost every element-wise vertex here pays (``hardware.VECTOR.elementwise_vertex_cycles``), one model for all of
    them, though Poplar's own estimate of the generated vertex starts at 20 cycles (ExpressionGenerator.cpp). The
    gradient arrives on the weight's tiles in the exchange of the pass that first reads it there
    (``UpdatePass.reads_gradient``, :func:`with_gradient_arrival`), unless an accumulation read it (``reads_gradient``
    False)."""
    steps = []
    for w in weights:
        for k, update in enumerate(passes):
            elements = int(w.size) if update.over_weight else 1
            work = VectorPass(update.codelet, elements, 1 if update.tensor_scale else 0)
            flops = flops_per_weight * int(w.size) if k == 0 else 0
            (step,) = _weight_step(w, update.name, "update", work, flops, spec, starts)
            fixed = np.where(step.cycles > 0, hardware.VECTOR.elementwise_vertex_cycles, 0)
            step.cycles = (step.cycles - fixed) * update.fused + fixed
            steps.append(with_gradient_arrival(step, w, spec) if update.reads_gradient and reads_gradient else step)
    return steps


@dataclass(frozen=True)
class RecordedStep:
    """One step of a custom training loop, recorded as it ran (``ipu.custom_loop``): its ops, lowered in place
    of running a Keras model's step, the bytes it gives its outfeeds, and those the call returns to the host."""

    ops: tuple
    output_bytes: int
    result_bytes: int = 0
    metric_work: tuple = ()
    """``(metric name, vector work)`` of each metric object the step updates (on the device, as fit's metrics)."""


def _metric_steps(model, batch, spec, mapper) -> tuple[list, list]:
    """The compiled metrics' work in one step, named ``metrics/<name>`` (so a pipeline runs it in its last stage),
    and its rows of the graph's signature. Graphcore's Keras computes the loss trackers and every metric of
    ``compile`` inside the compiled step, their results being the step's logs that the outfeed brings to the
    host (keras/ipu/extensions/extensions_base.py)."""
    if not model.compiled or getattr(model, "output_shape", None) is None:
        return [], []
    shapes = model.output_shape if isinstance(model.output_shape, list) else [model.output_shape]
    work = model.compiled_outputs.resolve(model).device_work([(batch, *s[1:]) for s in shapes])
    return metric_work_steps(work, spec, mapper)


def metric_work_steps(metric_work, spec, mapper) -> tuple[list, list]:
    """The compute sets of ``metric_work`` (``(metric name, vector work)`` pairs: a compiled metric's step, or a
    metric a custom loop's step updates), and their rows of the graph's signature; each metric's tensors are
    laid out by the graph's linear ``mapper``."""
    steps, signature = [], []
    for name, work in metric_work:
        elements = sum(item.elements for item in work)  # one operation per element compared, added or reduced
        start = mapper.take(memory_layout.mapped_bytes(elements, 4, spec.tiles))
        cost = OpCost(elements, 0, 0, 1, vector=work)
        steps += _steps_for(f"metrics/{name}", "forward", cost, spec, 4, 4, start=start)
        signature.append(["metric", repr(work)])  # its work, not its name (auc_1 is the same graph as auc)
    return steps, signature


def _record_step(model, mode, x, y) -> list:
    """The ops of one step of ``model``'s ``mode``, from running it once (its state restored after)."""
    if step_overrides.overridden(model, mode):  # the model's own step: its ops, as a plain step's are costed
        with _preserved_state(model), call_context.traced(f"{mode}_function"):
            return step_overrides.recorded_ops(model, mode, x, y)
    with _preserved_state(model), call_context.traced(f"{mode}_function"), record() as tape:
        if mode == "train":
            model.compute_gradients(x, y)
        elif mode == "test":
            from ..autograd import no_grad

            with no_grad():
                model.loss_and_parts(y, model(x, training=False))
        else:
            from ..autograd import no_grad

            with no_grad():
                model(x, training=False)
    return tape


def lower(
    model,
    mode,
    x,
    y,
    spec,
    accumulation=1,
    replicas=1,
    options_for=None,
    recorded=None,
    shape_only=False,
    recompute_segments=None,
    offload_optimizer_state=False,
    program_builder="tensorflow",
) -> LoweredGraph:
    """Lower ``model`` for ``mode`` at the micro-batch of ``x`` (run once, state restored after; with
    ``shape_only``, traced from its shapes without numerics where it can be, :mod:`.shape_only`: the same graph),
    or the ops of a custom loop's step ``recorded`` (a :class:`RecordedStep`) with ``model`` its stand-in.
    ``options_for(layer name, phase, "conv" or "matmul")`` gives each product's Poplar options.
    ``recompute_segments`` (``{layer name: segment}``, :func:`.recomputation.segments_of`) recomputes each
    segment's forward before its backward in training, as :mod:`.recomputation` says.
    ``offload_optimizer_state`` keeps the optimizer state in Streaming Memory (:mod:`.offloading`).
    ``program_builder`` is the framework that builds the program (:func:`.popart_program.builder_for`): "popart"
    lowers PopART's own ops where they differ from Graphcore's TensorFlow's (:mod:`.popart_program`)."""
    options_for = options_for or (lambda scope, phase, kind: matrix_plan.DEFAULT_OPTIONS)
    if recorded is not None:
        tape = list(recorded.ops)
    else:
        traced = shape_only_trace.trace_step(model, mode, x, y) if shape_only else None
        tape = _record_step(model, mode, x, y) if traced is None else traced
    forward, backward, signature, forward_per_op = [], [], [], []
    mapper = tile_placement.LinearMapper(spec.tiles)  # the graph's next-tile offset: weights first, then outputs
    weight_starts = memory_layout.weight_starts(model.weights, spec, mapper)
    # The graph's identity is its ops and shapes, not the layer names a session hands out: a second,
    # identical model (named dense_1 instead of dense) is the same executable, as in Poplar's cache.
    position = {layer.name: f"layer{i}" for i, layer in enumerate(model.layers)}
    for i, rec in enumerate(tape):
        label = f"{rec.scope or 'loss'}/{rec.op}"
        signature.append(
            [
                rec.op,
                position.get(rec.scope, rec.scope),
                [list(s) for s in rec.input_shapes],
                list(rec.output_shape),
                {k: v for k, v in rec.params.items() if isinstance(v, (int, float, str, tuple, bool))},
            ]
        )
        kind = next((p.planner for p in rec.forward.products), "matmul")
        start = _output_start(rec, spec, mapper)
        first_step = len(forward)
        forward += _steps_for(
            f"{label}:{i}",
            "forward",
            rec.forward,
            spec,
            rec.itemsize,
            int(np.prod(rec.output_shape)) * rec.itemsize,
            options_for(rec.scope, "forward", kind),
            start,
            _fused_bias_tiles(tape, forward_per_op, i) if program_builder == "tensorflow" else 0,
        )
        added = _popart_work(rec, i == len(tape) - 1 and mode == "train") if program_builder == "popart" else ((), ())
        forward += _named_work_steps(f"{label}:{i}", "forward", added[0], spec, rec.itemsize, start)
        if mode == "train":
            backward.append(
                _named_work_steps(f"{label}:{i}/grad", "backward", added[1], spec, rec.itemsize, start)
                + _steps_for(
                    f"{label}:{i}/grad",
                    "backward",
                    rec.backward,
                    spec,
                    rec.itemsize,
                    options=options_for(rec.scope, "backward", kind),
                    start=start,
                )
            )
        forward_per_op.append(forward[first_step:])
        if rec.op in OUTLINED_OPS or rec.forward.products:
            # the op's function: its kind, shapes, dtype, options and (so the same steps) its costs per phase
            shapes = repr((rec.op, signature[-1][2:], rec.itemsize))
            phases = [("forward", rec.forward, forward[first_step:])]
            phases += [("backward", rec.backward, backward[-1])] if mode == "train" else []
            for phase, cost, steps_of_op in phases:
                function = (shapes, phase, repr(cost), repr(options_for(rec.scope, phase, kind)))
                for k, step in enumerate(steps_of_op):
                    step.outlined = (*function, k)
        if rec.repeats_earlier:
            for step in forward[first_step:] + (backward[-1] if mode == "train" else []):
                step.compiled_earlier = True
    if recorded is not None or mode != "predict":
        metric_steps, metric_signature = (
            _metric_steps(model, batch_size_of(x), spec, mapper)
            if recorded is None
            else metric_work_steps(recorded.metric_work, spec, mapper)
        )
        forward, signature = forward + metric_steps, signature + metric_signature
    segment_of_op = (
        recomputation.segment_of_ops(tape, recompute_segments) if recompute_segments and mode == "train" else None
    )
    readers = {layer.name: [] for layer in model.layers}
    for layer in model.layers:
        for source in model.inbound_layers(layer):
            readers.setdefault(source.name, []).append(layer.name)
    if segment_of_op:
        kept = recomputation.checkpoint_ops(tape, segment_of_op, readers, recompute_segments)
        backward = recomputation.backward_with_recomputation(forward_per_op, backward, segment_of_op, kept)
    else:
        backward = [step for op_steps in reversed(backward) for step in op_steps]
    weights = model.trainable_weights
    update, memory = [], memory_layout.weight_memory(model.weights, spec, weight_starts)
    if mode == "train":
        if accumulation > 1:
            update += _per_weight_steps(weights, "accumulate", "accumulate", 1, spec, weight_starts)
        flops = model.optimizer.update_flops_per_weight + model.optimizer.clipping_flops_per_weight
        passes = (
            popart_program.weight_update_passes(model.optimizer, accumulation) if program_builder == "popart" else None
        )
        unaccumulated = accumulation == 1  # else the accumulation read the gradient and the update reads its sum
        updates = (
            _per_weight_steps(weights, "update", "update", flops, spec, weight_starts, unaccumulated)
            if passes is None
            else _popart_update_steps(weights, passes, flops, spec, weight_starts, unaccumulated)
        )
        slots = [
            memory_layout.weight_memory(weights, spec, weight_starts, f"/slot{s}", "optimizer state")
            for s in range(model.optimizer.slots_per_weight)
        ]
        if offload_optimizer_state and slots:
            first = len(forward) + len(backward) + len(update)
            updates, slots = offloading.streamed(updates, slots, first, 1 if passes is None else len(passes))
        update += updates
        memory += [item for per_slot in slots for item in per_slot]
        if accumulation > 1:
            memory += memory_layout.weight_memory(weights, spec, weight_starts, "/accumulator", "gradient accumulators")
        memory += memory_layout.gradient_memory(tape, forward + backward + update, spec)
    if segment_of_op:
        memory += recomputation.activation_memory(tape, forward + backward + update, spec, segment_of_op, readers, kept)
    else:
        memory += memory_layout.activation_memory(
            tape, forward + backward + update, spec, training=mode == "train", readers=readers
        )
    memory += memory_layout.temporary_memory(forward + backward + update, spec)
    batch = batch_size_of(x)
    per_sample = [int(np.prod(np.shape(a)[1:])) * _host_itemsize(a) for a in arrays_of(x)]  # a stream each
    per_label = [int(np.prod(np.shape(a)[1:])) * 4 for a in arrays_of(y)] if y is not None and mode != "predict" else []
    sample_bytes, label_bytes = sum(per_sample), sum(per_label)
    if recorded is not None:
        results = recorded.output_bytes
    elif mode == "predict":
        shapes = model.output_shape if isinstance(model.output_shape, list) else [model.output_shape]
        results = sum(int(np.prod(shape[1:])) for shape in shapes) * 4 * batch
    else:
        results = 4 * len(model.metrics)
    data_streams = [batch * size for size in per_sample + per_label] + [results]  # the inputs, labels, results
    streams = memory_layout.host_streams(memory, spec, data_streams)
    memory += memory_layout.code_memory(forward + backward + update, spec, streams)
    return LoweredGraph(
        mode,
        spec,
        batch,
        forward,
        backward if mode == "train" else [],
        update,
        memory,
        signature,
        input_bytes=batch * (sample_bytes + label_bytes),
        output_bytes=results,
        gradient_bytes=[int(w.size) * w.dtype.itemsize for w in weights],
        gradient_layers=[w.name.split("/", 1)[0] for w in weights],
        itemsizes=[rec.itemsize for rec in tape],
        result_bytes=0 if recorded is None else recorded.result_bytes,
    )


class _preserved_state:
    """Lowering runs the model once; put back everything that run could change (weights such as
    BatchNorm's moving averages, and every random generator), so the IPU's numerics equal the CPU's."""

    def __init__(self, model):
        self.model = model

    def __enter__(self):
        from ..keras import backend

        self.weights = self.model.get_weights()
        inner = [inner for layer in self.model.layers for inner in layer._flatten_layers()]
        self.generators = [backend.rng()] + [layer._rng for layer in inner if getattr(layer, "_rng", None) is not None]
        self.states = [g.bit_generator.state for g in self.generators]

    def __exit__(self, *exc):
        self.model.set_weights(self.weights)
        for g, s in zip(self.generators, self.states):
            g.bit_generator.state = s
        return False
