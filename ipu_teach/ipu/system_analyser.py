"""The host's side of a run next to the IPUs', in the spirit of PopVision's System Analyser (ipu-teach only).

The System Analyser shows what the host does while it drives the IPUs: the framework's calls, the stream copies
and the waits for data, on one line per thread, next to the device (its user guide; the workshop slides: "Show
the execution of the software on the host processor enabling users to identify bottlenecks in execution between
CPU & IPU(s)"). :func:`host_timeline` lays out the simulated executions of a model's executable the same way,
from what the executor already costs, so nothing here is a new cost:

- the host line: the front end's call of each execution (``bsp.HostCall``: Keras' fit loop, callbacks and the
  program's launch), the making of an execution's samples when the input pipeline works in the caller's thread
  (``ipu.host.simulate_input_pipeline(rate, overlapped=False)``), then ``Engine::run`` waiting for the device;
- one line per IPU: its stream copies (``StreamCopy``: the infeed and outfeed over PCIe), its waits for a late
  input pipeline (``StreamCopyBegin (host late)``), its compute sets, its IPU-Link copies (all-reduce, pipeline
  stage transfers) and its waits for the slowest IPU, from the Engine's timeline of the executable.

Every time is simulated. The timeline has one event per stretch of the same kind on a line (consecutive compute
sets are one event), and a summary of where the elapsed time went on each line.

Example:

>>> from ipu_teach.examples import trained_pipeline_model
>>> model = trained_pipeline_model()
INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
>>> timeline = host_timeline(model, executions=2)
>>> timeline.lanes
('host: Keras (train)', 'IPU 0', 'IPU 1')
>>> [event.label for event in timeline.events if event.lane == "host: Keras (train)"][:2]
['host call (Keras)', 'Engine::run']
>>> round(timeline.elapsed * 1e6, 1) == round(2 * model.get_ipu_executable().seconds_per_execution * 1e6, 1)
True
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass

import numpy as np

from ..atomic import atomic_write

MAX_SUPERSTEPS = 200_000
"""The most supersteps laid out per execution (a long loop is cut there, and the timeline says so)."""
API_NAMES = {"keras": "Keras", "custom_loop": "custom loop", "poptorch": "PopTorch"}
_GROUPS = {
    "compute": "compute sets",
    "exchange": "compute sets",
    "host->device": "StreamCopy host->device",
    "device->host": "StreamCopy device->host",
    "ipu-link": "IPU-Link copies",
    "streaming memory": "Streaming Memory copies",
    "sync": "waiting for the slowest IPU",
}


@dataclass(frozen=True)
class Event:
    """One stretch of work on a line of the timeline, in simulated seconds from the first execution's start."""

    lane: str
    label: str
    start: float
    duration: float
    execution: int
    """Which execution (0, 1, ...) it belongs to."""

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass(frozen=True)
class HostTimeline:
    """Simulated host and IPU events of a few executions: ``events``, the ``lanes`` they are on, ``elapsed``."""

    events: tuple
    lanes: tuple
    elapsed: float
    truncated: bool = False
    """True when an execution had more than MAX_SUPERSTEPS supersteps and its IPU lines were cut there."""

    def summary(self) -> str:
        """Returns, per line, each kind of event: how many, their simulated time and their share of the elapsed time.

        Example:

        >>> from ipu_teach.examples import trained_pipeline_model
        >>> model = trained_pipeline_model()
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> print(host_timeline(model, executions=1).summary().splitlines()[0])
        line                 event                                    events    simulated us   share
        """
        lines = [f"{'line':<20} {'event':<40} {'events':>6} {'simulated us':>15} {'share':>7}"]
        for lane in self.lanes:
            totals = {}
            for event in self.events:
                if event.lane == lane:
                    count, seconds = totals.get(event.label, (0, 0.0))
                    totals[event.label] = (count + 1, seconds + event.duration)
            for label, (count, seconds) in totals.items():
                share = seconds / self.elapsed if self.elapsed else 0.0
                lines.append(f"{lane:<20} {label:<40} {count:>6,} {seconds * 1e6:>15,.1f} {share:>7.1%}")
        lines.append(
            f"elapsed: {self.elapsed * 1e6:,.1f} us simulated" + (" (IPU lines cut)" if self.truncated else "")
        )
        return "\n".join(lines)

    def write_chrome_trace(self, path) -> str:
        """Writes the timeline as Chrome trace JSON to ``path``, atomically, and returns the path: open it in
        https://ui.perfetto.dev or chrome://tracing to zoom and pan as in the System Analyser. One process per line
        (the host, each IPU), times in simulated microseconds.

        Example:

        >>> import json
        >>> from ipu_teach.examples import trained_pipeline_model
        >>> model = trained_pipeline_model()
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> path = host_timeline(model).write_chrome_trace("host.json")
        >>> with open(path) as file:
        ...     sorted({event["args"]["name"] for event in json.load(file)["traceEvents"] if event["ph"] == "M"})
        ['IPU 0 (simulated)', 'IPU 1 (simulated)', 'host: Keras (train) (simulated)']
        """
        events = [
            {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": f"{lane} (simulated)"}}
            for pid, lane in enumerate(self.lanes)
        ]
        pids = {lane: pid for pid, lane in enumerate(self.lanes)}
        events += [
            {
                "name": event.label,
                "ph": "X",
                "ts": round(event.start * 1e6, 6),
                "dur": round(event.duration * 1e6, 6),
                "pid": pids[event.lane],
                "tid": 0,
                "args": {"execution": event.execution},
            }
            for event in self.events
        ]
        payload = {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"simulated": True}}
        path = os.fspath(path)
        with atomic_write(path) as stream:
            json.dump(payload, stream)
        return path

    def plot(self, title: str | None = None):
        """Returns a matplotlib Figure: one row per line, one bar per event, coloured by kind, over simulated time.

        Example:

        >>> import matplotlib.pyplot as plt
        >>> from ipu_teach.examples import trained_pipeline_model
        >>> model = trained_pipeline_model()
        INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
        >>> figure = host_timeline(model).plot()
        >>> [label.get_text() for label in figure.axes[0].get_yticklabels()]
        ['host: Keras (train)', 'IPU 0', 'IPU 1']
        >>> plt.close(figure)
        """
        import matplotlib.pyplot as plt

        labels = list(dict.fromkeys(event.label for event in self.events))
        colours = dict(zip(labels, itertools.cycle(plt.get_cmap("tab10").colors)))
        figure, axes = plt.subplots(figsize=(10, 0.6 * len(self.lanes) + 1.6))
        for row, lane in enumerate(self.lanes):
            for label in labels:
                bars = [(e.start * 1e6, e.duration * 1e6) for e in self.events if e.lane == lane and e.label == label]
                if bars:
                    axes.broken_barh(bars, (row - 0.4, 0.8), color=colours[label], label=label)
        handles = {}
        for handle, label in zip(*axes.get_legend_handles_labels()):
            handles.setdefault(label, handle)
        axes.legend(handles.values(), handles.keys(), loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3)
        axes.set_yticks(range(len(self.lanes)), self.lanes)
        axes.invert_yaxis()
        axes.set_xlim(0, self.elapsed * 1e6)
        axes.set_xlabel("simulated time (us)")
        axes.set_title(title or "Host and IPUs, simulated (in the spirit of PopVision's System Analyser)")
        figure.tight_layout()
        return figure


def host_timeline(model, mode: str = "train", executions: int = 2) -> HostTimeline:
    """Lays out ``executions`` simulated executions of ``model``'s ``mode`` executable, host and IPUs side by side.

    Args:
      model: A model run on the simulated IPU (created in an ``IPUStrategy`` scope, then fit, evaluate or predict).
      mode: ``"train"``, ``"test"`` or ``"predict"``, as ``model.get_ipu_executable``. Default: ``"train"``.
      executions: How many executions, back to back, from 1 to 100. Default: 2.

    Returns:
      A :class:`HostTimeline`.

    Raises:
      ValueError: for a model without that executable (the message says which call to make) or a bad count.
    """
    from .executor import host_call

    if isinstance(executions, bool) or not isinstance(executions, int) or not 1 <= executions <= 100:
        raise ValueError(f"host_timeline: executions must be a whole number from 1 to 100, got {executions!r}")
    executable = model.get_ipu_executable(mode)
    setup = model.device_executor.prepared[mode].setup
    device = executable.timeline
    call = host_call(setup, executable.graph, executable.synthetic, device.spec)
    host_lane = f"host: {API_NAMES[setup.host_api]} ({mode})"
    lanes = (host_lane, *(f"IPU {i}" for i in range(device.ipus)))
    events, truncated, period = [], False, executable.seconds_per_execution
    for execution in range(executions):
        start = execution * period
        clock = start
        for row in call.execution_order():
            seconds = float(call.superstep_cycles()[row]) / call.spec.clock_hz
            label = f"host call ({API_NAMES[setup.host_api]})" if call.kinds[row] != "host wait" else call.labels[row]
            events.append(Event(host_lane, label, clock, seconds, execution))
            clock += seconds
        events.append(Event(host_lane, "Engine::run", clock, device.seconds(), execution))
        ipu_events, cut = _ipu_events(device, clock, execution)
        events += ipu_events
        truncated |= cut
    return HostTimeline(tuple(events), lanes, executions * period, truncated)


def _ipu_events(timeline, start: float, execution: int) -> tuple:
    """Each IPU's events of one execution from ``start``: consecutive supersteps of one kind merged into one."""
    cycles = timeline.compute + timeline.sync + timeline.exchange
    rows = list(itertools.islice(timeline.execution_order(), MAX_SUPERSTEPS + 1))
    cut = len(rows) > MAX_SUPERSTEPS
    rows = np.array(rows[:MAX_SUPERSTEPS], dtype=np.int64)
    groups = [_GROUPS.get(kind, label) for kind, label in zip(timeline.kinds, timeline.labels)]
    events = []
    for ipu in range(timeline.ipus):
        widths = cycles[rows, ipu] / timeline.spec.clock_hz
        starts = start + np.cumsum(widths) - widths
        current = None
        for row, begin, width in zip(rows.tolist(), starts.tolist(), widths.tolist()):
            if width <= 0:
                continue
            if current is not None and current[0] == groups[row]:
                current[2] = begin + width - current[1]
            else:
                if current is not None:
                    events.append(Event(f"IPU {ipu}", current[0], current[1], current[2], execution))
                current = [groups[row], begin, width]
        if current is not None:
            events.append(Event(f"IPU {ipu}", current[0], current[1], current[2], execution))
    return events, cut
