"""Pipeline schedules as data: generate, validate, time, measure, print, trace and draw them.

The schedules Graphcore's pipelining offers (Grouped, Interleaved, Sequential) and two textbook ones
(GPipe, 1F1B), each a list of actions per stage that can be checked, timed and drawn without a model.

Example:

    >>> from ipu_teach import schedules
    >>> schedule = schedules.grouped(stages=4, micro_batches=16)
    >>> timeline = schedules.time_schedule(schedule, schedules.StageCosts.uniform(4, forward=1.0, backward=2.0))
    >>> schedules.summarise(timeline).total_seconds
    57.0
"""

from .actions import Action, Kind, Schedule, check_device_mapping
from .figure import Box, gantt_boxes, plot_schedule
from .folding import EVERY_ACTION_AT_MOST, summarise_folded
from .grid import text_grid
from .metrics import (
    PipelineMetrics,
    Phases,
    bubble_fraction,
    peak_stash,
    phases,
    stash_bytes,
    summarise,
    utilisation,
    utilisation_per_ipu,
)
from .rules import (
    SCHEDULE_NAMES,
    PipelineScheduleError,
    accumulation_multiple,
    check_gradient_accumulation,
    check_positive,
    display_name,
    schedule_key,
)
from .generators import GENERATORS, gpipe, grouped, interleaved, make_schedule, one_f_one_b, sequential
from .timing import ScheduleTiming, StageCosts, TimedAction, time_schedule
from .trace import chrome_trace, write_chrome_trace
from .validate import ScheduleError, validate, validate_timeline

Timeline = ScheduleTiming
"""The name ``ScheduleTiming`` had before 2026-11 (one release; ``bsp.Timeline`` is an engine run's)."""

__all__ = [
    "Action",
    "Box",
    "EVERY_ACTION_AT_MOST",
    "GENERATORS",
    "Kind",
    "PipelineMetrics",
    "PipelineScheduleError",
    "Phases",
    "SCHEDULE_NAMES",
    "Schedule",
    "ScheduleError",
    "ScheduleTiming",
    "StageCosts",
    "TimedAction",
    "Timeline",
    "accumulation_multiple",
    "bubble_fraction",
    "check_device_mapping",
    "check_gradient_accumulation",
    "check_positive",
    "chrome_trace",
    "display_name",
    "gantt_boxes",
    "gpipe",
    "grouped",
    "interleaved",
    "make_schedule",
    "one_f_one_b",
    "peak_stash",
    "phases",
    "plot_schedule",
    "schedule_key",
    "sequential",
    "stash_bytes",
    "summarise",
    "summarise_folded",
    "text_grid",
    "time_schedule",
    "utilisation",
    "utilisation_per_ipu",
    "validate",
    "validate_timeline",
    "write_chrome_trace",
]
