"""A text grid of a schedule: one row per IPU, one column per slot (step), like ``F0 F1 B0 ...``.

Actions sharing a cell (Grouped's forward and backward of one step) are joined with ``/``; idle
cells show ``.``. When several stages share an IPU, labels name the stage (``s1:F0``).
"""

from __future__ import annotations

from .actions import Schedule


def text_grid(schedule: Schedule, max_slots: int | None = 48) -> str:
    """Returns a pipeline schedule as a text grid: one row per IPU, one column per time slot.

    ``F3`` is the forward pass of micro-batch 3, ``B0`` a backward, ``WU`` the weight update and
    ``F3/B0`` two in the same slot; ``.`` is an idle slot, the pipeline's bubble.

    Args:
      schedule: A ``schedules.Schedule`` (from ``schedules.grouped(...)`` or a compiled model's pipeline).
      max_slots: Integer or None, the most columns shown, then ``...``. Default: 48.

    Example:

    >>> from ipu_teach import schedules
    >>> print(schedules.text_grid(schedules.grouped(stages=2, micro_batches=4)))
         |     0     1     2     3     4     5     6     7
    IPU0 |    F0    F1    F2 F3/B0    B1    B2    B3    WU
    IPU1 |     .    F0 F1/B0 F2/B1 F3/B2    B3     .    WU
    """
    shown = schedule.slots if max_slots is None else min(schedule.slots, max_slots)
    shared_ipus = len(set(schedule.device_mapping)) < schedule.stages
    cells = [[[] for _ in range(shown)] for _ in range(schedule.ipus)]
    for action in schedule.actions():
        if action.slot < shown:
            label = f"s{action.stage}:{action}" if shared_ipus else str(action)
            cells[action.ipu][action.slot].append(label)
    texts = [["/".join(cell) or "." for cell in row] for row in cells]
    width = max([len(str(shown - 1))] + [len(text) for row in texts for text in row])
    name_width = len(f"IPU{schedule.ipus - 1}")
    more = " ..." if shown < schedule.slots else ""
    header = " " * name_width + " | " + " ".join(str(slot).rjust(width) for slot in range(shown))
    lines = [header + more]
    for ipu, row in enumerate(texts):
        lines.append(f"IPU{ipu}".ljust(name_width) + " | " + " ".join(text.rjust(width) for text in row) + more)
    return "\n".join(lines)
