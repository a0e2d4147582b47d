"""Graphcore's rules linking the pipeline schedule, the number of stages and gradient accumulation.

The real IPU Keras refuses a pipeline whose gradient accumulation count does not fit the schedule:
Grouped needs a multiple of 2 x stages in training (of stages in inference), Interleaved a multiple
of stages, Sequential anything. The errors here say what to change, with the numbers.
The schedules Graphcore does not offer (GPipe, 1F1B, ...) accept any count of at least one.
The names, aliases and accumulation rules come from :mod:`.registry`.
"""

from __future__ import annotations

import operator

from .registry import GRAPHCORE_SPECS, REGISTRY, SPECS, any_count

SCHEDULE_NAMES = tuple(spec.key for spec in REGISTRY)
_ALIASES = {alias: spec.key for spec in REGISTRY for alias in spec.aliases}


class PipelineScheduleError(ValueError):
    """Raised for a pipeline configuration the schedule cannot run; the message says what to change.

    A ValueError, as Graphcore's pipelining raises for the same rules.

    Example:

    >>> from ipu_teach import schedules
    >>> schedules.check_gradient_accumulation("Grouped", 3, 4)
    Traceback (most recent call last):
    ...
    ipu_teach.schedules.rules.PipelineScheduleError: The Grouped pipeline schedule with 3 stages in training needs ...
    """


def schedule_key(schedule: object) -> str:
    """Normalise ``"Grouped"``, ``PipelineSchedule.Grouped`` or ``"1F1B"`` to a key of SCHEDULE_NAMES (a display
    name's spaces and hyphens read as underscores)."""
    text = "_".join(str(getattr(schedule, "name", schedule)).rsplit(".", 1)[-1].lower().replace("-", " ").split())
    key = _ALIASES.get(text, text)
    if key not in SCHEDULE_NAMES:
        raise PipelineScheduleError(
            f"Unknown pipeline schedule {schedule!r}; choose one of {', '.join(spec.display for spec in REGISTRY)}."
        )
    return key


def display_name(schedule: object) -> str:
    """The schedule's name as Graphcore (or the paper) writes it, e.g. ``Grouped`` or ``1F1B``."""
    return SPECS[schedule_key(schedule)].display


def check_positive(name: str, value: object) -> int:
    """Stages and micro-batch counts are whole numbers of at least one."""
    try:
        number = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        number = None
    if number is None or number < 1:
        raise PipelineScheduleError(f"{name} must be a whole number >= 1, got {value!r}.")
    return number


def accumulation_multiple(schedule: object, stages: int, training: bool = True) -> int:
    """The number gradient accumulation must be a multiple of for this schedule and stage count."""
    spec = SPECS[schedule_key(schedule)]
    return spec.accumulation(check_positive("The number of pipeline stages", stages), training)


def check_gradient_accumulation(schedule: object, stages: int, accumulation: int, training: bool = True) -> None:
    """Raises :class:`PipelineScheduleError` unless ``accumulation`` suits the schedule and stage count.

    Graphcore's rules: Grouped needs a multiple of 2 x stages in training, Interleaved a multiple of the
    stages, Sequential any count. In inference ``accumulation`` is the number of micro-batches the
    pipeline runs (``steps_per_execution``).

    Args:
      schedule: A schedule name (``"Grouped"``...) or an ``ipu.ops.pipelining_ops.PipelineSchedule``.
      stages: Integer, the pipeline stages.
      accumulation: Integer, ``gradient_accumulation_steps_per_replica``.
      training: Boolean, training (True) or inference. Default: True.

    Example:

    >>> from ipu_teach import schedules
    >>> schedules.check_gradient_accumulation("Grouped", 2, 8)          # a multiple of 4: fine
    >>> try:
    ...     schedules.check_gradient_accumulation("Grouped", 2, 6)
    ... except schedules.PipelineScheduleError as error:
    ...     print(error)
    The Grouped pipeline schedule with 2 stages in training needs gradient_accumulation_steps_per_replica to be a
    multiple of 4 (2 x 2 stages), but it is 6. Use 4 or 8 or use PipelineSchedule.Interleaved (a multiple of 2) or
    PipelineSchedule.Sequential (any count).
    """
    stages = check_positive("The number of pipeline stages", stages)
    accumulation = check_positive("gradient_accumulation_steps_per_replica", accumulation)
    multiple = accumulation_multiple(schedule, stages, training)
    if accumulation % multiple == 0:
        return
    name = display_name(schedule)
    mode = "training" if training else "inference"
    why = f"2 x {stages} stages" if multiple == 2 * stages else f"{stages} stages"
    lower = accumulation // multiple * multiple
    options = " or ".join(str(value) for value in (lower, lower + multiple) if value > 0)
    count = (
        "gradient_accumulation_steps_per_replica" if training else "the number of micro-batches (steps_per_execution)"
    )
    raise PipelineScheduleError(
        f"The {name} pipeline schedule with {stages} stages in {mode} needs {count} to be a multiple of "
        f"{multiple} ({why}), but it is {accumulation}. Use {options}{_alternatives(schedule, stages, training)}."
    )


def _alternatives(schedule: object, stages: int, training: bool) -> str:
    """The Graphcore schedules after this one in the registry, with the counts they accept."""
    key = schedule_key(schedule)
    keys = [spec.key for spec in GRAPHCORE_SPECS]
    later = GRAPHCORE_SPECS[keys.index(key) + 1 :] if key in keys else ()
    accepts = [
        f"PipelineSchedule.{spec.display} ("
        + ("any count" if spec.accumulation is any_count else f"a multiple of {spec.accumulation(stages, training)}")
        + ")"
        for spec in later
    ]
    return " or use " + " or ".join(accepts) if accepts else ""
