"""Graphcore's rules linking the pipeline schedule, the number of stages and gradient accumulation.

The real IPU Keras refuses a pipeline whose gradient accumulation count does not fit the schedule:
Grouped needs a multiple of 2 x stages in training (of stages in inference), Interleaved a multiple
of stages, Sequential anything. The errors here say what to change, with the numbers.
GPipe and 1F1B are not Graphcore schedules; they accept any count of at least one.
"""
from __future__ import annotations

import operator

SCHEDULE_NAMES = ("grouped", "interleaved", "sequential", "gpipe", "one_f_one_b")
_DISPLAY_NAMES = {"grouped": "Grouped", "interleaved": "Interleaved", "sequential": "Sequential",
                  "gpipe": "GPipe", "one_f_one_b": "1F1B"}
_ALIASES = {"1f1b": "one_f_one_b", "pipedream": "one_f_one_b", "pipedream_flush": "one_f_one_b"}


class PipelineScheduleError(ValueError):
    """A pipeline configuration the schedule cannot run; the message says what to change."""


def schedule_key(schedule: object) -> str:
    """Normalise ``"Grouped"``, ``PipelineSchedule.Grouped`` or ``"1F1B"`` to a key of SCHEDULE_NAMES."""
    text = str(getattr(schedule, "name", schedule)).rsplit(".", 1)[-1].strip().lower().replace("-", "_")
    key = _ALIASES.get(text, text)
    if key not in SCHEDULE_NAMES:
        raise PipelineScheduleError(f"Unknown pipeline schedule {schedule!r}; choose one of "
                                    f"{', '.join(_DISPLAY_NAMES.values())}.")
    return key


def display_name(schedule: object) -> str:
    """The schedule's name as Graphcore (or the paper) writes it, e.g. ``Grouped`` or ``1F1B``."""
    return _DISPLAY_NAMES[schedule_key(schedule)]


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
    key = schedule_key(schedule)
    stages = check_positive("The number of pipeline stages", stages)
    if key == "grouped":
        return 2 * stages if training else stages
    if key == "interleaved":
        return stages
    return 1


def check_gradient_accumulation(schedule: object, stages: int, accumulation: int, training: bool = True) -> None:
    """Raise :class:`PipelineScheduleError` unless ``accumulation`` suits the schedule and stage count.

    In inference ``accumulation`` is the number of micro-batches the pipeline runs (``steps_per_execution``).
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
    count = "gradient_accumulation_steps_per_replica" if training else "the number of micro-batches (steps_per_execution)"
    alternatives = {"grouped": f" or use PipelineSchedule.Interleaved (a multiple of {stages}) or PipelineSchedule.Sequential (any count)",
                    "interleaved": " or use PipelineSchedule.Sequential (any count)"}
    raise PipelineScheduleError(
        f"The {name} pipeline schedule with {stages} stages in {mode} needs {count} to be a multiple of "
        f"{multiple} ({why}), but it is {accumulation}. Use {options}{alternatives.get(schedule_key(schedule), '')}.")
