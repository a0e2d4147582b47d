"""Actions: the atoms of a pipeline schedule, and a Schedule as plain columnar data.

An action is one stage doing one piece of work: the forward pass (F) or backward pass (B) of one
micro-batch, or the weight update (WU) once the gradients of all micro-batches are accumulated.
A schedule also says *when* (a step, or "slot") and *where* (an IPU) each action runs.

The schedule keeps its actions as numpy columns (one entry per action), so 16 stages x 1,024
micro-batches (~33,000 actions) are generated, validated and timed without Python loops;
:meth:`Schedule.actions` turns them into :class:`Action` objects for people to read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np


class Kind(str, enum.Enum):
    """What an action computes. The integer :attr:`code` is what the schedule's arrays store."""

    FORWARD = "F"
    BACKWARD = "B"
    WEIGHT_UPDATE = "WU"

    @property
    def code(self) -> int:
        return _KIND_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> "Kind":
        return _KINDS_BY_CODE[int(code)]


_KINDS_BY_CODE = (Kind.FORWARD, Kind.BACKWARD, Kind.WEIGHT_UPDATE)
_KIND_CODES = {kind: code for code, kind in enumerate(_KINDS_BY_CODE)}
FORWARD, BACKWARD, WEIGHT_UPDATE = (kind.code for kind in _KINDS_BY_CODE)
NO_MICRO_BATCH = -1  # the micro-batch column of a weight update, which covers all of them


@dataclass(frozen=True)
class Action:
    """One stage's forward, backward or weight update, with the step (slot) and IPU it runs on.

    ``micro_batch`` is ``None`` for a weight update. ``str(action)`` is the short label of the text
    grid and the Gantt chart, e.g. ``F3``, ``B0`` or ``WU``.
    """

    stage: int
    kind: Kind
    micro_batch: int | None
    slot: int
    ipu: int

    def __str__(self) -> str:
        return self.kind.value if self.micro_batch is None else f"{self.kind.value}{self.micro_batch}"

    def describe(self) -> str:
        """A label that names the stage too, for error messages."""
        what = {Kind.FORWARD: "forward", Kind.BACKWARD: "backward", Kind.WEIGHT_UPDATE: "weight update"}[self.kind]
        batch = "" if self.micro_batch is None else f" of micro-batch {self.micro_batch}"
        return f"{self} ({what}{batch} on stage {self.stage}, IPU {self.ipu}, slot {self.slot})"


@dataclass(frozen=True, eq=False)
class Schedule:
    """A pipeline schedule as data: one row per action, sorted in execution order.

    Columns (numpy int64 arrays of equal length): ``stage``, ``kind`` (codes of :class:`Kind`),
    ``micro_batch`` (-1 for weight updates) and ``slot`` (the step the action runs in). Actions
    sharing an IPU and a slot run one after the other in row order (Grouped runs a forward then a
    backward in each step). ``lockstep`` says how :func:`~ipu_teach.schedules.timing.time_schedule`
    times it: all IPUs synchronise after every slot (Graphcore's BSP pipelines) or each action
    starts as soon as its inputs and its IPU are ready. ``device_mapping[s]`` is the IPU of stage s.
    """

    name: str
    stages: int
    micro_batches: int
    training: bool
    lockstep: bool
    device_mapping: tuple[int, ...]
    stage: np.ndarray
    kind: np.ndarray
    micro_batch: np.ndarray
    slot: np.ndarray

    @classmethod
    def from_columns(
        cls,
        name: str,
        stages: int,
        micro_batches: int,
        training: bool,
        lockstep: bool,
        device_mapping: Sequence[int] | None,
        stage,
        kind,
        micro_batch,
        slot,
    ) -> "Schedule":
        """Build a schedule from unsorted columns, putting rows in execution order (slot, then F/B/WU)."""
        mapping = check_device_mapping(stages, device_mapping)
        columns = [np.asarray(column, dtype=np.int64).ravel() for column in (stage, kind, micro_batch, slot)]
        if len({column.size for column in columns}) != 1:
            raise ValueError(
                f"Schedule {name!r}: the stage, kind, micro_batch and slot columns must have "
                f"equal lengths, got {[column.size for column in columns]}."
            )
        stage, kind, micro_batch, slot = columns
        order = np.lexsort((micro_batch, stage, kind, slot))
        return cls(
            name,
            int(stages),
            int(micro_batches),
            bool(training),
            bool(lockstep),
            mapping,
            stage[order],
            kind[order],
            micro_batch[order],
            slot[order],
        )

    @classmethod
    def from_actions(
        cls,
        name: str,
        stages: int,
        micro_batches: int,
        actions: Sequence[Action],
        *,
        training: bool = True,
        lockstep: bool = False,
        device_mapping: Sequence[int] | None = None,
    ) -> "Schedule":
        """Build a schedule from :class:`Action` objects (their ``ipu`` must match the device mapping)."""
        columns = [
            [action.stage for action in actions],
            [action.kind.code for action in actions],
            [NO_MICRO_BATCH if action.micro_batch is None else action.micro_batch for action in actions],
            [action.slot for action in actions],
        ]
        schedule = cls.from_columns(name, stages, micro_batches, training, lockstep, device_mapping, *columns)
        for action in actions:
            if 0 <= action.stage < stages and schedule.device_mapping[action.stage] != action.ipu:
                raise ValueError(
                    f"Action {action.describe()} says IPU {action.ipu}, but the device mapping "
                    f"puts stage {action.stage} on IPU {schedule.device_mapping[action.stage]}; "
                    "fix the action's ipu or pass a matching device_mapping."
                )
        return schedule

    def __len__(self) -> int:
        return int(self.stage.size)

    @property
    def ipus(self) -> int:
        """Number of IPUs the pipeline occupies (one replica)."""
        return max(self.device_mapping) + 1

    @property
    def ipu(self) -> np.ndarray:
        """The IPU of every action (from the device mapping); stages outside the mapping get -1."""
        mapping = np.asarray(self.device_mapping + (-1,), dtype=np.int64)
        inside = (self.stage >= 0) & (self.stage < self.stages)
        return mapping[np.where(inside, self.stage, self.stages)]

    @property
    def slots(self) -> int:
        """Number of slots (steps) from the first to the last action."""
        return int(self.slot.max()) + 1 if len(self) else 0

    def rows(self, kind: int) -> np.ndarray:
        """Row index of each (stage, micro-batch)'s action of ``kind`` (F or B), shape (stages, micro_batches).

        -1 where the schedule has no such action; assumes each appears at most once (see validate).
        """
        rows = np.full((self.stages, self.micro_batches), -1, dtype=np.int64)
        chosen = np.flatnonzero(self.kind == kind)
        rows[self.stage[chosen], self.micro_batch[chosen]] = chosen
        return rows

    def action(self, index: int) -> Action:
        """The action in row ``index`` as an :class:`Action`."""
        return self._make_action(
            int(self.stage[index]), int(self.kind[index]), int(self.micro_batch[index]), int(self.slot[index])
        )

    def actions(self) -> Iterator[Action]:
        """All actions in execution order."""
        columns = (self.stage.tolist(), self.kind.tolist(), self.micro_batch.tolist(), self.slot.tolist())
        return (self._make_action(*row) for row in zip(*columns))

    def _make_action(self, stage: int, kind: int, micro_batch: int, slot: int) -> Action:
        ipu = self.device_mapping[stage] if 0 <= stage < self.stages else -1
        return Action(
            stage=stage,
            kind=Kind.from_code(kind),
            slot=slot,
            ipu=ipu,
            micro_batch=None if micro_batch == NO_MICRO_BATCH else micro_batch,
        )

    def __repr__(self) -> str:
        mode = "training" if self.training else "inference"
        return (
            f"Schedule({self.name!r}, stages={self.stages}, micro_batches={self.micro_batches}, {mode}, "
            f"{len(self)} actions in {self.slots} slots on {self.ipus} IPUs)"
        )


def check_device_mapping(stages: int, device_mapping: Sequence[int] | None) -> tuple[int, ...]:
    """Stage s runs on IPU s unless ``device_mapping`` (one IPU per stage) says otherwise."""
    if device_mapping is None:
        return tuple(range(stages))
    mapping = tuple(int(ipu) for ipu in device_mapping)
    if len(mapping) != stages or any(ipu < 0 for ipu in mapping):
        raise ValueError(
            f"device_mapping {list(mapping)} must give one IPU index >= 0 for each of the "
            f"{stages} pipeline stages, e.g. {list(range(stages))}."
        )
    return mapping
