"""Recomputation from Graphcore's recomputation checkpoints, outside a pipeline and within a pipeline's stages.

Graphcore's TensorFlow, with ``IPUConfig.allow_recompute`` set, keeps for the backward pass only the tensors
marked as recomputation checkpoints (``ipu_tensorflow_addons.keras.layers.RecomputationCheckpoint``,
``ipu.pipelining_ops.recomputation_checkpoint``) and recomputes the rest from the latest checkpoint just before
the backward pass needs them ("For non-pipelined models, recomputation checkpoints need to be added", TF2 user
guide, perf_training.rst "Recomputation"; on one IPU its compiler does this as a Sequential pipeline whose
stages are the checkpoints' segments, ``RecomputationMode.RecomputeAndBackpropagateInterleaved``, as
Graphcore's ResNet-50 runs). Memory goes down (one segment's activations live at a time, plus the checkpoints),
compute goes up by the recomputed forward passes.

ipu-teach does what a pipeline's recomputation does (:func:`.programs.action_programs`: a stage's forward
again before its backward) with a segment in place of a stage: the segments are numbered by how many
checkpoints lie before a layer; each segment but the last (whose backward follows its forward at once) runs its
forward steps again, the same compute sets, just before its backward steps. A segment's tensors then live
twice, briefly: in the forward pass until their last reader, and from their recomputation until their
gradient is made. What a later segment reads (the checkpoints) stays live from the forward to the backward.
As a pipeline stage's, a segment's whole forward pass is recomputed (Poplar would leave out the ops whose
outputs the backward pass does not read, such as the checkpoint's own op): a little more compute than real.
The numerics, computed on the host, are unchanged.

In a pipeline with ``RecomputationMode.RecomputeAndBackpropagateInterleaved`` a segment is a stage's part between
checkpoints: every segment is recomputed (a stage keeps only its stashed input and its checkpoints, each stashed
for every micro-batch in flight, ``lowering.split_by_stage``), in place of the stage's whole forward pass before
its backward that ``RecomputeThenBackpropagate`` runs: the same steps, so the same cycles, fewer live at once.
"""

from __future__ import annotations

from dataclasses import replace

from . import memory_layout
from .memory_layout import MemoryItem

RECOMPUTE = "recompute"
"""The phase, and the name part, of a recomputed forward step (``layer/Op:i/recompute``)."""
CHECKPOINT = "checkpoint"
"""The name part of a checkpoint's activation (``layer/Op:i/checkpoint``), kept for the backward pass."""


def segments_for(model, plan, allow_recompute: bool, pipelining: dict) -> dict | None:
    """The segments a training step recomputes: ``{layer name: (stage, segment)}``, or None. A model that is not
    pipelined: its checkpoints' segments (:func:`segments_of`), with ``allow_recompute``. A pipeline recomputing
    with ``RecomputationMode.RecomputeAndBackpropagateInterleaved`` and checkpoints: each stage's segments, every
    one recomputed (the stage keeps only its stashed input and the checkpoints), in place of the whole stage's
    forward before its backward that the other modes recompute (:func:`.programs.action_programs`)."""
    from .ops.pipelining_ops import RecomputationMode

    segments = segments_of(model) if allow_recompute else None
    if segments is None or plan is None:
        return None if segments is None else {name: (0, s) for name, s in segments.items()}
    if (
        not plan.recompute
        or pipelining.get("recomputation_mode") != RecomputationMode.RecomputeAndBackpropagateInterleaved
    ):
        return None
    last = plan.stages - 1
    return {name: (plan.stage_of_layer.get(name, last), s) for name, s in segments.items()}


def segments_of(model) -> dict | None:
    """``{layer name: segment}``: the most recomputation checkpoints on a path from the inputs to the layer (a
    checkpoint starts the next segment); None for a model without checkpoints (nothing to recompute from)."""
    from .ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint

    layers = list(getattr(model, "layers", ()))
    if not any(isinstance(layer, RecomputationCheckpoint) for layer in layers):
        return None
    segments: dict = {}

    def segment(layer) -> int:
        if layer.name not in segments:
            segments[layer.name] = 0  # a layer is not its own ancestor
            before = max((segment(parent) for parent in model.inbound_layers(layer)), default=0)
            segments[layer.name] = before + isinstance(layer, RecomputationCheckpoint)
        return segments[layer.name]

    for layer in layers:
        segment(layer)
    return segments


def segment_of_ops(records, segments: dict) -> list:
    """The ``(stage, segment)`` of each recorded op: its layer's, never before that of an op recorded earlier (the
    loss and ops outside every layer are in the segment of the op before them)."""
    found, current = [], (0, 0)
    for record in records:
        current = max(current, segments.get(record.scope, current))
        found.append(current)
    return found


def recomputed_step(step):
    """A forward step run again before the backward pass: the same compute set (cycles and exchange), named
    ``layer/Op:i/recompute/...`` and in the ``recompute`` phase."""
    parts = step.name.split("/")
    return replace(step, name="/".join(parts[:2] + [RECOMPUTE] + parts[2:]), phase=RECOMPUTE)


def checkpoint_ops(records, segment_of_op: list, readers: dict, segments: dict) -> set:
    """The indices of the ops whose output is a checkpoint: a layer's last op, read by a later segment of its stage
    that has ops to run again (a stage's last checkpoint, whose segment there holds only the checkpoint layer, is
    not one). Kept from the forward pass for the backward, they are not recomputed."""
    last = max(segment_of_op, default=(0, 0))
    computing = set(segment_of_op)  # a segment of checkpoint layers alone computes nothing
    segment_of_layer, last_op_of_layer = dict(segments), {}  # ``segments``: every layer's, those without ops too
    for index, (record, s) in enumerate(zip(records, segment_of_op)):
        segment_of_layer.setdefault(record.scope, s)
        last_op_of_layer[record.scope] = index

    def recomputes_from(reader, s) -> bool:  # a later segment of the same stage that has ops to run again
        later = segment_of_layer.get(reader, last)
        return later > s and later[0] == s[0] and later in computing

    return {
        index
        for index, (record, s) in enumerate(zip(records, segment_of_op))
        if last_op_of_layer[record.scope] == index
        and any(recomputes_from(reader, s) for reader in readers.get(record.scope, ()))
    }


def backward_with_recomputation(forward_per_op: list, backward_per_op: list, segment_of_op: list, kept=()) -> list:
    """The backward pass's steps, ops in reverse order, with each segment's forward steps recomputed just before the
    first of its ops' backward steps: every segment of a pipeline, the last one excepted in a model that is not
    pipelined (its backward follows its forward at once). The ops in ``kept`` (:func:`checkpoint_ops`: their
    outputs were kept) are not run again, as Poplar leaves out recomputed ops nothing reads."""
    last = max(segment_of_op, default=(0, 0))
    every = last[0] > 0  # pipelined: no stage keeps its forward pass's activations
    steps, recomputed = [], set()
    for i in reversed(range(len(backward_per_op))):
        s = segment_of_op[i]
        if (every or s < last) and s not in recomputed:
            recomputed.add(s)
            ops = [k for k, segment in enumerate(segment_of_op) if segment == s and k not in kept]
            steps += [recomputed_step(step) for k in ops for step in forward_per_op[k]]
        steps += backward_per_op[i]
    return steps


def activation_memory(records, steps, spec, segment_of_op: list, readers: dict, kept: set) -> list:
    """The forward pass's outputs under recomputation. A checkpoint (an output of ``kept``, from
    :func:`checkpoint_ops`) and every output of the last segment live from the forward step until its gradient is
    made, as without recomputation; the other outputs of a recomputed segment live in the forward pass until
    their last reader (as in inference), then again from their recomputation until their backward has read them."""
    training = memory_layout.activation_memory(records, steps, spec, training=True, readers=readers)
    passing = {m.name: m for m in memory_layout.activation_memory(records, steps, spec, False, readers)}
    spans = memory_layout.op_spans(steps)
    items = []
    for item, index, _ in _by_op(training, segment_of_op):
        op = item.name.rsplit("/output", 1)[0]
        if index in kept:  # a pipeline stashes it as it stashes the stage's input
            items.append(replace(item, name=f"{op}/{CHECKPOINT}"))
            continue
        if f"{op}/{RECOMPUTE}" not in spans:
            items.append(item)
            continue
        again = spans[f"{op}/{RECOMPUTE}"][0]
        until = spans.get(f"{op}/grad", (again, again))[1]
        recomputed = MemoryItem(f"{op}/recomputed output", item.category, item.per_tile, (again, until))
        items += [passing[item.name], recomputed]
    return items


def _by_op(items, segment_of_op):
    """Each activation item with the index and segment of the op that made it (named ``layer/Op:i/output``)."""
    for item in items:
        index = int(item.name.rsplit("/output", 1)[0].rsplit(":", 1)[1])
        yield item, index, segment_of_op[index]
