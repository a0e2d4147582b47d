"""Every schedule's closed slot formula (``schedules/registry.py``) equals a step-by-step reference: a loop that
runs the schedule's rule in words, each action in the first slot its rule allows once its input exists.

The rules, per stage s and slot t (a slot is a lock-step step, or a place in an event-driven IPU's order):
Grouped and PopTorch run one forward and one backward in every slot; Interleaved and 1F1B run forwards in the
slots where t - s is even and backwards in the others; Eager 1F1B forwards in even slots and backwards in odd
ones; GPipe runs one action per slot and no backward before every forward is done; Sequential runs one action in
the whole pipeline per slot, micro-batch after micro-batch. Inference runs one forward per slot on every stage
(Sequential: one in the whole pipeline). A forward needs the previous stage's, a backward the next stage's (the
last stage: its own forward), both in an earlier slot, and each stage takes its micro-batches in order. Weight
updates follow the backwards: in lock-step all one slot after the last backward, event-driven each stage one
slot after its own, Sequential one stage per slot."""

import itertools

import pytest

from ipu_teach import schedules
from ipu_teach.schedules.actions import BACKWARD, FORWARD, WEIGHT_UPDATE
from ipu_teach.schedules.registry import REGISTRY

F, B, WU = "F", "B", "WU"
KIND = {FORWARD: F, BACKWARD: B, WEIGHT_UPDATE: WU}


def _may_run(key, stage, slot, training, every_forward_done):
    """The kinds of action the schedule's rule lets ``stage`` run in ``slot``, in the order it runs them."""
    if not training or key in ("grouped", "poptorch"):
        return (F, B) if training else (F,)
    if key in ("interleaved", "one_f_one_b"):
        return (F,) if (slot - stage) % 2 == 0 else (B,)
    if key == "eager_1f1b":
        return (F,) if slot % 2 == 0 else (B,)
    if key == "gpipe":
        return (B,) if every_forward_done else (F,)
    raise AssertionError(f"no reference rule for {key!r}: add one to this test")


def _input_of(kind, stage, micro_batch, stages):
    if kind == F:
        return None if stage == 0 else (stage - 1, F, micro_batch)
    return (stage, F, micro_batch) if stage == stages - 1 else (stage + 1, B, micro_batch)


def _pipelined_reference(key, stages, micro_batches, training, lockstep):
    slots, upcoming = {}, {(stage, kind): 0 for stage in range(stages) for kind in (F, B)}
    last = stages * micro_batches * (2 if training else 1)
    for slot in itertools.count():
        if len(slots) == last:
            break
        every_forward_done = all(upcoming[stage, F] == micro_batches for stage in range(stages))
        ran = {}
        for stage in range(stages):
            for kind in _may_run(key, stage, slot, training, every_forward_done):
                micro_batch = upcoming[stage, kind]
                needed = _input_of(kind, stage, micro_batch, stages)
                if micro_batch < micro_batches and (needed is None or slots.get(needed, slot) < slot):
                    ran[stage, kind, micro_batch] = slot
                    upcoming[stage, kind] += 1
                    if kind == F and key == "gpipe":
                        break  # one action per slot
        slots.update(ran)
    if training:
        ends = [max(slots[stage, B, m] for m in range(micro_batches)) for stage in range(stages)]
        for stage in range(stages):
            slots[stage, WU, None] = (max(ends) if lockstep else ends[stage]) + 1
    return slots


def _sequential_reference(stages, micro_batches, training):
    order = []
    for micro_batch in range(micro_batches):
        order += [(stage, F, micro_batch) for stage in range(stages)]
        if training:
            order += [(stage, B, micro_batch) for stage in reversed(range(stages))]
    if training:
        order += [(stage, WU, None) for stage in range(stages)]
    return {action: slot for slot, action in enumerate(order)}


def reference_slots(key, stages, micro_batches, training, lockstep):
    """``{(stage, kind, micro_batch): slot}`` from the schedule's rule, one slot at a time."""
    if key == "sequential":
        return _sequential_reference(stages, micro_batches, training)
    return _pipelined_reference(key, stages, micro_batches, training, lockstep)


@pytest.mark.parametrize("spec", REGISTRY, ids=lambda spec: spec.key)
@pytest.mark.parametrize("training", [True, False], ids=["training", "inference"])
@pytest.mark.parametrize("stages", [1, 2, 3, 5])
def test_every_slot_formula_equals_the_step_by_step_rule(spec, training, stages):
    multiple = schedules.accumulation_multiple(spec.key, stages, training)
    for micro_batches in (multiple, 2 * multiple, 3 * multiple + (multiple == 1)):
        schedule = schedules.GENERATORS[spec.key](stages, micro_batches, training=training)
        generated = {
            (action.stage, KIND[action.kind.code], action.micro_batch): action.slot for action in schedule.actions()
        }
        assert generated == reference_slots(spec.key, stages, micro_batches, training, spec.lockstep)


def test_the_reference_finds_a_wrong_formula():
    """A formula one slot off on one stage is caught: Grouped's backwards as if the last stage waited a step."""
    schedule = schedules.grouped(2, 4)
    generated = {(a.stage, KIND[a.kind.code], a.micro_batch): a.slot for a in schedule.actions()}
    shifted = {action: slot + (action[:2] == (1, B)) for action, slot in generated.items()}
    assert shifted != reference_slots("grouped", 2, 4, True, lockstep=True) == generated
