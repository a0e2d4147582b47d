"""Tile memory of a lowered program, as PopVision shows it: tensors by role and liveness, code by category.

Every tensor is mapped linearly over the tiles and has a role (weights, optimizer state, gradient
accumulators, activations, temporary memory). PopVision files it as an always-live variable (weights and
optimizer state, there from load to exit) or a not-always-live one (an activation, from the step that makes
it to the last step that reads it; a gradient from the backward step that makes it to the one that reads it;
a product's temporary memory while that product runs). Poplar gives
not-always-live tensors that are never live together the same addresses, so a tile needs its always-live
bytes plus the peak of what is live at once (:func:`~ipu_teach.bsp.allocated_per_tile`). The program's
code and runtime state (vertex code, control code, exchange code, vertex instance state, stack) are always
live; their sizes follow ``hardware.CODE``, counted in instructions per codelet, exchange message, program
step, compute set, host stream and vertex, so they grow with the program's length, variety and how scattered
its data is, never with the bytes it moves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .. import bsp, hardware
from . import tile_placement

TEMPORARY = "temporary memory"
"""The role of the matrix products' temporary memory (not always live, as PopVision shows it)."""
GRADIENTS = "gradients"
"""The role of the backward pass's gradients of activations (not always live)."""


@dataclass
class MemoryItem:
    """Bytes per tile of one variable or code category. ``category`` is its role (``variables``,
    ``activations``, ..., or a code category); ``live`` is None for an item PopVision classifies as always
    live, else the first and last program step it is live in (indices into ``LoweredGraph.steps``)."""

    name: str
    category: str
    per_tile: np.ndarray
    live: tuple[int, int] | None = None

    @property
    def always_live(self) -> bool:
        return self.live is None

    @property
    def live_from(self) -> int:
        return 0 if self.live is None else self.live[0]

    @property
    def live_until(self) -> int:
        return -1 if self.live is None else self.live[1]

    @property
    def popvision_category(self) -> str:
        """PopVision's category: always-live / not-always-live variables for a tensor, else its code category."""
        return hardware.popvision_category(self.category, self.always_live)


def allocated(memory, steps: int, tiles: int) -> np.ndarray:
    """Bytes per tile the program needs: always-live items plus the peak of the not-always-live ones."""
    always = sum((m.per_tile for m in memory if m.always_live), np.zeros(tiles, dtype=np.int64))
    return bsp.allocated_per_tile(always, [(m.per_tile, *m.live) for m in memory if not m.always_live], steps)


def ipu_peak(memory, steps: int) -> int:
    """Bytes live at once over all the tiles at the program's fullest step (PopVision's liveness total)."""
    always = np.array([sum(int(m.per_tile.sum()) for m in memory if m.always_live)], dtype=np.int64)
    live = [(np.array([int(m.per_tile.sum())]), *m.live) for m in memory if not m.always_live]
    return int(bsp.allocated_per_tile(always, live, steps)[0])


def spread(count: int, tiles: int, start: int = 0) -> np.ndarray:
    """How many of ``count`` units each tile gets when they are spread linearly over the tiles from ``start``."""
    return tile_placement.place(bsp.linear_elements_per_tile(max(int(count), 0), tiles), start, tiles)


VECTOR_BYTES = 8
"""The tile's 64-bit vector width: a linear mapping's grain is a vector (2 fp32 or 4 fp16 values)."""
MIN_BYTES_PER_TILE = 128
"""A linear mapping puts at least 128 bytes on each tile it uses."""


def mapped_bytes(elements: int, itemsize: int, tiles: int, start: int = 0) -> np.ndarray:
    """Bytes per tile of a tensor mapped as ``poputil::mapTensorLinearly`` maps it by default: grains of one
    vector, at least 128 bytes on each tile used (poplibs lib/poputil/TileMapping.cpp, calcLinearTileMapping:
    grainSize = target.getVectorWidth, minBytesPerTile = 128), from tile ``start`` (:mod:`.tile_placement`). A
    small tensor so sits on a few tiles, which is one reason real tiles are not evenly full."""
    laid = bsp.linear_elements_per_tile(
        max(int(elements), 0),
        tiles,
        grain=max(1, VECTOR_BYTES // itemsize),
        min_elements_per_tile=-(-MIN_BYTES_PER_TILE // itemsize),
    )
    return tile_placement.place(laid * itemsize, start, tiles)


def relayout_messages(receiving: np.ndarray, sending: np.ndarray) -> tuple:
    """``(incoming, outgoing)`` messages per tile when a tensor held as ``sending`` bytes per tile is copied to a
    layout of ``receiving`` bytes per tile that another plan made, unrelated to it: a slice of ``b`` bytes lies
    across ``b / g + 1`` pieces of ``g`` bytes on average (an interval at a random offset on a grid of pieces),
    rounded to the nearest whole message, and no more than the other side has tiles.

    Example: a weight on 4 tiles receiving its gradient from 2

    >>> import numpy as np
    >>> from ipu_teach.ipu import memory_layout
    >>> weight, gradient = np.array([0, 100, 100, 100, 100]), np.array([200, 200, 0, 0, 0])
    >>> incoming, outgoing = memory_layout.relayout_messages(weight, gradient)
    >>> incoming.tolist(), outgoing.tolist()
    ([0, 2, 2, 2, 2], [3, 3, 0, 0, 0])
    """

    def pieces(slices: np.ndarray, others: np.ndarray) -> np.ndarray:
        piece = others[others > 0].mean()
        count = np.floor(slices / piece + 1.5).astype(np.int64)  # 1 + b / g, to the nearest whole
        return np.where(slices > 0, np.minimum(count, np.count_nonzero(others)), 0)

    return pieces(receiving, sending), pieces(sending, receiving)


def weight_memory(weights, spec, starts: dict, name_suffix="", category="variables") -> list:
    """Each weight mapped linearly from its start tile (``starts``: ``{weight name: tile}``, where the graph's
    linear mapper put it, :func:`weight_starts`); its optimizer slots and accumulator are laid out like it."""
    return [
        MemoryItem(w.name + name_suffix, category, mapped_bytes(w.size, w.dtype.itemsize, spec.tiles, starts[w.name]))
        for w in weights
    ]


def weight_starts(weights, spec, mapper) -> dict:
    """``{weight name: start tile}``: the weights mapped one after the other by the graph's linear mapper."""
    return {w.name: mapper.take(mapped_bytes(w.size, w.dtype.itemsize, spec.tiles)) for w in weights}


SHARED_CODELETS = {
    **{name: name for name in hardware.VECTOR_CODELETS},
    "reduce": "reduce_add",  # after the vector codelets, whose popops "reduce" is a reduction's stage
    "reduction": "reduce",
    "stage": "reduce",
    "transform": "transpose",
}
"""The parts of an op (the last part of a step's name) that run a vertex every op shares, by that vertex: a matrix
product's reduction stages (``reduceN``: poplin's ReduceAdd, lib/poplin/ConvReduce.cpp; its single-input and
general variants taken as one), a reduction's every stage (``reduction``, ``stageN``: popops' Reduce vertices,
lib/popops/reduction),
a backward product's rearrangement (``transform``: popops' Transpose vertices, lib/popops/Rearrange.cpp) and an
element-wise pass named by its popops codelet (``add``, ``exp``, ...: ``BinaryOp1DSupervisor<ADD, float>`` is
one vertex type whichever op adds)."""


def codelet_of(step) -> str:
    """The codelet a step's vertices run, named from the step: a part every op shares by its vertex
    (:data:`SHARED_CODELETS`: ``Softmax/reduction/stage1`` and ``BatchNorm/grad/reduction`` are both ``reduce``,
    every product's ``MatMul/reduce1`` ``reduce_add``), else its op and what part of the op it is
    (``Conv2D/grad``), without the indices that tell instances apart; a weight's update or accumulation is one
    codelet for every weight. Poplar loads a vertex type's code once on a tile whichever compute sets run it there,
    so counting by vertex, not by op, is what the tile holds."""
    if step.phase in ("update", "accumulate"):
        return step.phase
    if step.codelet:  # an element-wise pass: an Add op's own pass and a softmax's add run one vertex type
        return step.codelet
    parts = [re.sub(r"\d+$", "", part) for part in step.name.split("/")[1:]]
    op = parts[0].split(":")[0] if parts else step.name
    rest = [part for part in parts[1:] if part not in ("serial", "recompute")]  # a recomputed op runs its own code
    return SHARED_CODELETS[rest[-1]] if rest and rest[-1] in SHARED_CODELETS else "/".join([op, *rest])


def compiled_steps(steps) -> list:
    """The steps whose code the program holds: a loop's later iterations (``compiled_earlier``: an RNN's
    timesteps) run the first's code, and a later call of an outlined op (``LoweredStep.outlined``: a product or
    normalization with the same shapes and options as one before it) runs the function compiled for that one,
    vertices, exchanges and syncs included (its call and argument copies left out)."""
    seen, kept = set(), []
    for step in steps:
        if step.compiled_earlier or (step.outlined is not None and step.outlined in seen):
            continue
        if step.outlined is not None:
            seen.add(step.outlined)
        kept.append(step)
    return kept


def code_memory(steps, spec, host_streams: np.ndarray | int = 0) -> list:
    """Code and runtime state bytes per tile (PopVision's code categories), from which steps run where
    (:func:`compiled_steps`: code compiled once is held once) and the program's ``host_streams`` on each tile
    (:func:`host_streams`)."""
    c = hardware.CODE
    steps = compiled_steps(steps)
    active = np.array([s.cycles > 0 for s in steps]) if steps else np.zeros((0, spec.tiles), bool)
    codelets = {}
    for step, runs in zip(steps, active):
        codelets[codelet_of(step)] = codelets.get(codelet_of(step), np.zeros(spec.tiles, bool)) | runs
    codelets_on_tile = sum((runs.astype(np.int64) for runs in codelets.values()), np.zeros(spec.tiles, np.int64))
    compute_sets_on_tile = active.sum(axis=0).astype(np.int64)
    elementwise = np.array([bool(s.codelet) for s in steps], bool)  # an element-wise pass: one vertex a tile
    vertices_on_tile = (
        active[~elementwise].sum(axis=0) * c.vertices_per_compute_set
        + active[elementwise].sum(axis=0) * c.vertices_per_elementwise_compute_set
    )
    control_instructions = len(steps) * c.control_instructions_per_step + compute_sets_on_tile * (
        c.control_instructions_per_compute_set
    )
    return [
        MemoryItem(
            "vertexCode",
            "vertex code",
            np.where(codelets_on_tile > 0, c.vertex_code_bytes, 0) + codelets_on_tile * c.vertex_code_bytes_per_codelet,
        ),
        MemoryItem("controlCode", "control code", c.control_code_bytes + control_instructions * c.instruction_bytes),
        MemoryItem("internalExchangeCode", "internal exchange code", exchange_code(steps, spec)),
        MemoryItem(
            "hostExchangeCode",
            "host exchange code",
            np.full(spec.tiles, c.host_exchange_code_bytes) + host_streams * c.host_exchange_code_bytes_per_stream,
        ),
        MemoryItem(
            "vertexInstanceState",
            "vertex instance state",
            vertices_on_tile.astype(np.int64) * c.vertex_state_bytes,
        ),
        MemoryItem("stack", "stack", np.full(spec.tiles, c.stack_bytes, np.int64)),
    ]


VARIABLE_ROLES = ("variables", "optimizer state")
"""The roles of the tensors the host loads onto the device and reads back, a host stream each way."""


def host_streams(memory, spec, data_stream_bytes=()) -> np.ndarray:
    """Per tile, the host streams whose data is mapped there: two for each variable among ``memory`` on the tiles
    it is mapped to (weights and optimizer state are loaded from the host and read back), and one for each data
    stream of ``data_stream_bytes`` (each input, the labels, the results of one step) on the tiles a linear
    mapping gives it (:func:`mapped_bytes`)."""
    per_tile = np.zeros(spec.tiles, np.int64)
    for item in memory:
        if item.category in VARIABLE_ROLES:
            per_tile += 2 * (item.per_tile > 0)
    for size in data_stream_bytes:
        per_tile += mapped_bytes(size, 1, spec.tiles) > 0
    return per_tile


def exchange_code(steps, spec) -> np.ndarray:
    """Internal exchange code bytes per tile: each exchange's code sits on every tile it involves, once whether the
    tile sends, receives or both (one instruction stream, set up and wound down once), and grows with the messages
    it handles there, one per tile it hears from or sends to, never with their length (:func:`exchange_messages`)."""
    c = hardware.CODE
    instructions = np.zeros(spec.tiles, np.int64)
    for received, senders, known, sends in _exchanges(steps):
        incoming, outgoing = exchange_messages(received, senders, known, sends)
        instructions += np.where((incoming > 0) | (outgoing > 0), c.exchange_instructions_per_exchange, 0)
        instructions += incoming * c.exchange_instructions_per_message_received
        instructions += outgoing * c.exchange_instructions_per_message_sent
    return instructions * c.instruction_bytes


def _exchanges(steps) -> list:
    """Each exchange of ``steps``: the bytes each tile receives, which tiles send them (the tiles of the last
    compute set before it, which made what it moves: a product's partial sums, the previous op's output; the
    receivers themselves where nothing ran before, the data having come from the host), and the messages each
    tile receives and sends where the plan knows them (``LoweredStep.messages`` and ``sends``, else None)."""
    exchanges, made_by = [], None
    for step in steps:
        if step.received.any():
            senders = step.received > 0 if made_by is None else made_by
            exchanges.append((step.received, senders, step.messages, step.sends))
        if step.cycles.any():
            made_by = step.cycles > 0
    return exchanges


def exchange_messages(
    received: np.ndarray, senders: np.ndarray, incoming: np.ndarray | None = None, outgoing: np.ndarray | None = None
) -> tuple:
    """Messages per tile of one exchange, ``(incoming, outgoing)``: each sender sends its share of the messages
    the receivers get, at most as many as a receiver hears. Unless ``incoming`` is known, the ``received`` bytes
    are taken as spread evenly over the ``senders`` (a tensor mapped linearly), so a tile receiving r of the
    exchange's R bytes hears from about r / (R / senders) of them, at least one. Scaling every tile's bytes (a
    larger batch) changes no count: the code grows with how scattered the data is, not with its size.

    Example:

    >>> import numpy as np
    >>> from ipu_teach.ipu import memory_layout
    >>> senders = np.array([False, False, True, True])
    >>> incoming, outgoing = memory_layout.exchange_messages(np.array([800, 800, 0, 0]), senders)
    >>> incoming.tolist(), outgoing.tolist()
    ([1, 1, 0, 0], [0, 0, 1, 1])
    """
    total, sending = int(received.sum()), int(np.count_nonzero(senders))
    if total == 0 or sending == 0:
        return np.zeros_like(received), np.zeros_like(received)
    if incoming is None:
        incoming = np.minimum(-(-received * sending // total), sending)
    incoming = np.where(received > 0, np.maximum(incoming, 1), 0)
    if outgoing is not None:
        return incoming, outgoing
    # the exchange is receiver-selected: a piece many tiles hear is sent once, so a sender sends its share of the
    # messages, but no more than the most any receiver hears (a broadcast from one tile is that many messages)
    outgoing = np.where(senders, min(-(-int(incoming.sum()) // sending), int(incoming.max())), 0)
    return incoming, outgoing


def activation_memory(records, steps, spec, training: bool, readers: dict | None = None) -> list:
    """Outputs of the forward pass. In training each is live from the op's forward step until its backward
    has read it. Otherwise until its last reader has: the next op of the same layer, else the layers that read
    the layer's output (``readers``: ``{layer name: names of the layers it feeds}``, so a skip connection's
    tensor stays until the Add that reads it), else the next op."""
    spans = op_spans(steps)
    written = {step.name: k for k, step in enumerate(steps)}  # the op's main step writes its output
    readers = readers or {}
    items = []
    names = _op_names(records)
    for i, (rec, name) in enumerate(zip(records, names)):
        nbytes = int(np.prod(rec.output_shape)) * rec.itemsize
        if name not in written or nbytes == 0:
            continue
        first, last = written[name], spans[name][1]
        if training:
            until = spans.get(f"{name}/grad", (last + 1, last + 1))[1]
        else:
            later = [(r.scope, n) for r, n in zip(records[i + 1 :], names[i + 1 :]) if n in spans]
            same_layer = later and later[0][0] == rec.scope
            read_by = _read_by(rec, readers.get(rec.scope, ()), records, names, spans)
            if same_layer or not read_by:
                until = spans[later[0][1]][1] if later else last
            else:
                until = max(read_by)
        per_tile = mapped_bytes(nbytes // rec.itemsize, rec.itemsize, spec.tiles, steps[first].first_tile)
        items.append(MemoryItem(f"{name}/output", "activations", per_tile, live=(first, max(until, last))))
    return items


def _read_by(rec, layers, records, names, spans) -> list:
    """The last steps of the ops of ``layers`` that read ``rec``'s output: those taking a tensor of its shape
    (a layer's own casts of its weights do not), else the layer's last op."""
    shape = tuple(rec.output_shape)
    found = []
    for layer in layers:
        ops = [(r, n) for r, n in zip(records, names) if r.scope == layer and n in spans]
        reading = [n for r, n in ops if shape in (tuple(s) for s in r.input_shapes)] or [n for _, n in ops[-1:]]
        found += [spans[n][1] for n in reading[:1]]
    return found


def _op_names(records) -> list:
    """Each recorded op's name in the lowered program: ``layer/Op:i`` (``loss/...`` outside any layer)."""
    return [f"{rec.scope or 'loss'}/{rec.op}:{i}" for i, rec in enumerate(records)]


def gradient_memory(records, steps, spec) -> list:
    """The backward pass's gradients of activations (role ``gradients``, not always live): the gradient of an
    op's output is made by the next op's backward and read by the op's own. A next op with no backward compute
    set either passes its gradient through (an Add or a Reshape: the gradient is its own output's, made later
    in the backward pass by the first op after it that has a backward) or, with no such op after it, made it in
    its forward (as TensorFlow's fused softmax cross-entropy computes its gradient with the loss).
    (A weight's gradient is not
    counted: Graphcore's schedulers apply each update as soon as its gradient exists, while ipu-teach's
    program lists every update after the backward pass, which would keep all of them live at once.)"""
    spans = op_spans(steps)
    names = _op_names(records)
    items, made = [], None  # made: where the backward makes the gradient the next op receives
    for rec, name, consumer in reversed(list(zip(records, names, names[1:]))):
        backward = spans.get(f"{consumer}/grad")
        if backward:
            made = backward[0]
        elif made is None:  # no op after it has a backward: the consumer made the gradient in its forward
            made = spans.get(consumer, (None, None))[1]
        nbytes = int(np.prod(rec.output_shape)) * rec.itemsize
        if made is None or f"{name}/grad" not in spans or nbytes == 0:
            continue
        last = spans[f"{name}/grad"][1]
        start = steps[spans[name][0]].first_tile if name in spans else 0  # laid out like the output
        per_tile = mapped_bytes(nbytes // rec.itemsize, rec.itemsize, spec.tiles, start)
        items.append(MemoryItem(f"{name}/output/grad", GRADIENTS, per_tile, live=(made, max(made, last))))
    return items[::-1]


def op_spans(steps) -> dict:
    """``{op name: (first, last) step}`` of each op's forward (``layer/Op:i``), backward (``layer/Op:i/grad``)
    and recomputed forward (``layer/Op:i/recompute``, :mod:`.recomputation`) compute sets, and of each weight's
    update or accumulation (``layer/kernel/update``)."""
    spans = {}
    for k, step in enumerate(steps):
        parts = step.name.split("/")
        if step.phase in ("update", "accumulate"):
            key = step.name
        elif len(parts) > 2 and (step.phase, parts[2]) in (("backward", "grad"), ("recompute", "recompute")):
            key = "/".join(parts[:3])
        else:
            key = "/".join(parts[:2])
        first = spans.get(key, (k, k))[0]
        spans[key] = (first, k)
    return spans


def temporary_memory(steps, spec) -> list:
    """Each matrix product's temporary memory (its rearranged operand slices and partial sums), a not-always-live
    variable of its own, live from the product's rearrangement to its partials' last reduction stage (a serial
    pass reuses the first's): poplin adds them as graph variables of the product's program (``graph.addVariable``
    of the rearranged operands and of the ``partials`` in lib/poplin/Convolution.cpp), and Poplar's liveness-based
    allocator lets variables never live together share addresses. A step so holds its own product's temporaries
    and no other's; a step that runs no product, none."""
    items = []
    for k, step in enumerate(steps):
        if step.temporary is not None:
            first, last = _product_span(steps, k)
            items.append(MemoryItem(f"{step.name}/temporaries", TEMPORARY, step.temporary, live=(first, last)))
    return items


def _product_span(steps, main: int) -> tuple:
    """The first and last step of the product whose main step is ``steps[main]`` (``name``): its rearrangement
    ``name/transform`` before it, its reduction stages ``name/reduce``, ``name/reduce1``, ... and its later serial
    passes ``name/serialK/...`` after it (:func:`.lowering._product_steps` lowers them in that order)."""
    name = steps[main].name
    first = main - 1 if main > 0 and steps[main - 1].name == f"{name}/transform" else main
    own = re.compile(re.escape(name) + r"/(reduce\d*|serial\d+(/transform|/reduce\d*)?)")
    last = main
    while last + 1 < len(steps) and own.fullmatch(steps[last + 1].name):
        last += 1
    return first, last
