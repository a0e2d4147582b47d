"""The metrics of a long pipeline without timing every action: ramp-up, one period of the main phase, ramp-down.

Every schedule but GPipe places micro-batch m at slots affine in m, so past the ramp-up each further group
of ``period`` micro-batches (the accumulation multiple the schedule needs) repeats the same work, shifted in
time by the same number of seconds. :func:`summarise_folded` times the schedule for two short counts, M1 and
M1 + period, and checks that the second is the first with one period inserted in the middle: every action
before the cut starts at the same time, every action after it (and the weight updates) exactly one period
later. The dependencies and IPU order of the inserted period are those of its neighbours, so inserting
q periods shifts the rest by q periods: the metrics of M1 + q * period micro-batches follow with no more work
and no memory that grows with q. The tests compare them with the full simulation for many configurations.
"""

from __future__ import annotations

import numpy as np

from .actions import BACKWARD, FORWARD, WEIGHT_UPDATE
from .generators import make_schedule
from .metrics import Phases, PipelineMetrics, metrics_of, peak_stash, phases, stash_of, summarise
from .rules import accumulation_multiple, check_gradient_accumulation, display_name
from .timing import ScheduleTiming, StageCosts, time_schedule

EVERY_ACTION_AT_MOST = 4_096
"""The most micro-batches timed (and drawn) action by action; beyond, the metrics are folded from short timings."""
_SAME = dict(rtol=1e-12, atol=0.0)  # whole or dyadic costs repeat exactly; others up to float rounding


def summarise_folded(
    schedule: object,
    micro_batches: int,
    costs: StageCosts,
    *,
    recompute: bool = False,
    activation_bytes=None,
    input_bytes=None,
    device_mapping=None,
) -> PipelineMetrics:
    """The ``summarise`` metrics of ``schedule`` in training with ``micro_batches``, from two short timings.

    The arguments are those of ``make_schedule``, ``time_schedule`` and ``summarise``; time and memory do not
    grow with ``micro_batches``.

    Raises:
      PipelineScheduleError: for an accumulation the schedule does not accept (Graphcore's rules).
      ValueError: for a schedule whose main phase does not repeat (GPipe runs every forward before any
        backward) or does not settle within ``EVERY_ACTION_AT_MOST`` micro-batches; the message says what to change.

    Example:

    >>> from ipu_teach import schedules
    >>> costs = schedules.StageCosts.uniform(4, forward=1.0, backward=2.0)
    >>> schedules.summarise_folded("Grouped", 10**9, costs).total_seconds     # 4 + (10**9 - 1) * 3 + 8
    3000000009.0
    """
    check_gradient_accumulation(schedule, costs.stages, micro_batches, training=True)
    period = accumulation_multiple(schedule, costs.stages, True)
    first = max(4 * costs.stages, 2 * period)
    first += -first % period
    while first + period <= min(micro_batches, EVERY_ACTION_AT_MOST):
        short, longer = (
            time_schedule(
                make_schedule(schedule, costs.stages, m, device_mapping=device_mapping), costs, recompute=recompute
            )
            for m in (first, first + period)
        )
        shift = _period_seconds(short, longer, period)
        if shift is not None:
            return _extrapolated(short, longer, shift, (micro_batches - first) // period, activation_bytes, input_bytes)
        first *= 2
    if micro_batches <= EVERY_ACTION_AT_MOST:  # too short to hold two periods past the ramp-up: time every action
        plan = make_schedule(schedule, costs.stages, micro_batches, device_mapping=device_mapping)
        timeline = time_schedule(plan, costs, recompute=recompute)
        return summarise(timeline, activation_bytes=activation_bytes, input_bytes=input_bytes)
    raise ValueError(
        f"{display_name(schedule)} with {micro_batches:,} micro-batches: its main phase does not repeat within "
        f"{EVERY_ACTION_AT_MOST:,} micro-batches, so only timing every action would give its figures; use an "
        f"accumulation of at most {EVERY_ACTION_AT_MOST:,} or a schedule whose main phase repeats (Grouped, "
        "Interleaved, 1F1B, ...)"
    )


def _starts(timeline: ScheduleTiming) -> tuple:
    """Start times of forwards and backwards as (stages, micro-batches) arrays, and of the weight updates."""
    schedule = timeline.schedule
    updates = np.flatnonzero(schedule.kind == WEIGHT_UPDATE)
    updates = updates[np.argsort(schedule.stage[updates], kind="stable")]
    return timeline.start[schedule.rows(FORWARD)], timeline.start[schedule.rows(BACKWARD)], timeline.start[updates]


def _period_seconds(short: ScheduleTiming, longer: ScheduleTiming, period: int) -> float | None:
    """The seconds one period adds if ``longer`` is ``short`` with ``period`` micro-batches inserted at a cut
    in the middle (and ends one period later); None if it is not."""
    cut = short.schedule.micro_batches // 2 // period * period
    (forward, backward, update), (forward2, backward2, update2) = _starts(short), _starts(longer)
    shift = float(forward2[0, cut + period] - forward[0, cut])
    same_before = all(np.array_equal(a[:, :cut], b[:, :cut]) for a, b in ((forward, forward2), (backward, backward2)))
    shifted_after = all(
        np.allclose(b[:, cut + period :], a[:, cut:] + shift, **_SAME)
        for a, b in ((forward, forward2), (backward, backward2))
    )
    ends_later = bool(np.allclose(update2, update + shift, **_SAME))
    ends_later = ends_later and bool(np.isclose(longer.total, short.total + shift, **_SAME))
    # the order alone decides the stash: GPipe's grows with the micro-batches even when its costs are all 0
    same_stash = np.array_equal(peak_stash(short.schedule), peak_stash(longer.schedule))
    return shift if same_before and shifted_after and ends_later and same_stash else None


def _extrapolated(short, longer, shift, periods, activation_bytes, input_bytes) -> PipelineMetrics:
    """The metrics of ``short`` with ``periods`` more periods of ``shift`` seconds (``longer`` has one more)."""
    total = short.total + periods * shift
    busy = short.busy_per_ipu() + periods * (longer.busy_per_ipu() - short.busy_per_ipu())
    per_ipu = busy / total if total > 0 else np.zeros_like(busy)
    short_phases = phases(short)
    main_start, main_end = short_phases.main_start, short_phases.main_end + periods * shift
    schedule = short.schedule
    micro_batches = schedule.micro_batches + periods * (longer.schedule.micro_batches - schedule.micro_batches)
    spans = Phases(
        ramp_up=main_start,
        main=main_end - main_start,
        ramp_down=total - main_end,
        main_start=main_start,
        main_end=main_end,
    )
    stash = stash_of(schedule, activation_bytes, input_bytes, short.recompute)
    return metrics_of(schedule, micro_batches, total, per_ipu, spans, stash)
