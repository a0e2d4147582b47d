"""``gc-info -l`` and ``gc-monitor`` for the simulated system, in the layout of Graphcore's command-line tools.

On a real IPU-POD the workshop's first hands-on runs ``gc-info -l`` (the devices of the partition: single IPUs,
then the multi-IPU devices a program can attach) and ``gc-monitor`` (which process holds which IPUs). These print
the same for the simulated system, from a notebook (:func:`gc_info`, :func:`gc_monitor`) or a terminal
(``ipu-teach gc-info -l``, ``ipu-teach gc-monitor``). Layouts follow Graphcore's Command Line Tools guide
(docs.graphcore.ai/projects/command-line-tools: "gc-info", "gc-monitor"): device lines
``-+- Id: [16], target: [Multi IPU]`` with their IPUs below, ``|--- Id: [0], DNC Id: [0], ...``; gc-monitor's
card table and its "Attached processes in partition" table, one row per IPU. What is not simulated is left
out, not made up: serial numbers, firmware versions, temperatures and power. Machines are named
``sim-m2000-<n>`` and partitions ``sim-<system>``, so a listing is never taken for a real one.

Each ipu-teach process simulates its own system: two notebooks may both hold IPU 0, where on a shared Pod the
second would wait or get other IPUs. gc-monitor reads what each process holds from :mod:`.attachments`.

Example:

>>> print("\\n".join(device_listing("IPU-M2000").splitlines()[:8]))
Graphcore device listing:
Partition: sim-m2000 [active]
-+- Id: [0], target: [Fabric], IPU-M host: [sim-m2000-0], IPU#: [3]
-+- Id: [1], target: [Fabric], IPU-M host: [sim-m2000-0], IPU#: [2]
-+- Id: [2], target: [Fabric], IPU-M host: [sim-m2000-0], IPU#: [1]
-+- Id: [3], target: [Fabric], IPU-M host: [sim-m2000-0], IPU#: [0]
-+- Id: [4], target: [Multi IPU]
 |--- Id: [0], DNC Id: [0], IPU-M host: [sim-m2000-0], IPU#: [3]
"""

from __future__ import annotations

import time

from .. import hardware
from . import attachments, system

MACHINE_TYPE = "M2000"
NOTE = (
    "Simulated by ipu-teach: each process has its own simulated {system}; processes do not share or wait for "
    "these IPUs. Not simulated: serial numbers, firmware, temperature, power."
)


def partition_name(system_name: str) -> str:
    """The simulated partition's name: ``sim-pod16`` for the IPU-POD16."""
    return "sim-" + system_name.lower().removeprefix("ipu-")


def _machine(ipu: int) -> tuple:
    """``(IPU-M host, IPU#)`` of a single IPU: 4 IPUs per machine, numbered 3 to 0 as gc-info lists them."""
    per_machine = hardware.MK2.ipus_per_machine
    return f"sim-m2000-{ipu // per_machine}", per_machine - 1 - ipu % per_machine


def device_listing(system_name: str | None = None) -> str:
    """What ``gc-info -l`` prints for the simulated ``system_name`` (default: the one in use).

    Args:
      system_name: One of ``ipu.system.SYSTEMS``; default ``ipu.system.system_name()``.

    Raises:
      ValueError: for an unknown system, naming the known ones.
    """
    system_name = _known(system_name)
    lines = ["Graphcore device listing:", f"Partition: {partition_name(system_name)} [active]"]
    for device_id, first, size in system.device_table(system.SYSTEMS[system_name]):
        if size == 1:
            host, number = _machine(first)
            lines.append(f"-+- Id: [{device_id}], target: [Fabric], IPU-M host: [{host}], IPU#: [{number}]")
            continue
        lines.append(f"-+- Id: [{device_id}], target: [Multi IPU]")
        for dnc, ipu in enumerate(range(first, first + size)):
            host, number = _machine(ipu)
            lines.append(f" |--- Id: [{ipu}], DNC Id: [{dnc}], IPU-M host: [{host}], IPU#: [{number}]")
    return "\n".join(lines)


def _known(system_name: str | None) -> str:
    name = system.system_name() if system_name is None else system_name
    if name not in system.SYSTEMS:
        raise ValueError(f"Unknown system {name!r}; choose one of {', '.join(system.SYSTEMS)}")
    return name


def _table(widths: list, header_groups: list, rows: list, groups_of_rows: list) -> list:
    """A gc-monitor box: ``header_groups`` are rows of ``(text, columns spanned)`` above the column rows;
    ``groups_of_rows`` are lists of rows (each a list of cells), ruled off from each other. Cells are centred."""

    def rule(spans):
        parts, column = [], 0
        for span in spans:
            parts.append("-" * (sum(widths[column : column + span]) + span - 1))
            column += span
        return "+" + "+".join(parts) + "+"

    def line(cells):
        parts, column = [], 0
        for text, span in cells:
            width = sum(widths[column : column + span]) + span - 1
            parts.append(str(text)[:width].center(width))
            column += span
        return "|" + "|".join(parts) + "|"

    out = []
    for group in header_groups:
        out += [rule([span for _, span in group]), line(group)]
    columns = [1] * len(widths)
    out += [rule(columns), line([(title, 1) for title in rows]), rule(columns)]
    for group in groups_of_rows:
        out += [line([(cell, 1) for cell in row]) for row in group] + [rule(columns)]
    return out


def _fit_first_column(widths: list, title_width: int) -> list:
    """Widen the first column until a title of ``title_width`` characters fits across the table."""
    inner = sum(widths) + len(widths) - 1
    return [widths[0] + max(0, title_width - inner), *widths[1:]]


def card_table(system_name: str) -> list:
    """gc-monitor's card table of the simulated partition: one row per IPU, ruled off by machine."""
    total, spec = system.SYSTEMS[system_name], hardware.MK2
    title = f"Partition: {partition_name(system_name)} [active] has {total} reconfigurable IPUs"
    tool_width = 15  # the title row splits after 15 characters, as Graphcore's does, whatever the columns below
    widths = _fit_first_column([13, 7, 13, 9, 4, 6, 7], tool_width + 1 + len(title) + 4)
    machines = {}
    for ipu in range(total):
        host, number = _machine(ipu)
        machines.setdefault(host, []).append(
            [host, MACHINE_TYPE, spec.name.split()[0], f"{spec.clock_hz / 1e6:.0f}MHz", ipu, number, "DNC"]
        )
    rest = sum(widths) + len(widths) - 1 - tool_width - 1
    top = "+" + "-" * tool_width + "+" + "-" * rest + "+"
    title_line = "|" + "gc-monitor".center(tool_width) + "|" + title.center(rest) + "|"
    columns = ["IPU-M", "Type", "IPU", "Clock", "ID", "IPU#", "Routing"]
    return [top, title_line, *_table(widths, [], columns, list(machines.values()))]


def process_table(system_name: str, processes: list, now: float) -> list:
    """gc-monitor's table of the processes attached in the partition: one row per IPU a process holds."""
    partition = partition_name(system_name)
    if not processes:
        text = f"No attached processes in partition {partition}"
        return ["+" + "-" * 98 + "+", "|" + text.center(98) + "|", "+" + "-" * 98 + "+"]
    widths = [8, 41, 8, 12, 4, 10]
    groups = [
        [
            [record.pid, record.command, _held_for(now - record.attached_at), record.user, ipu, _clock(record)]
            for ipu in record.ipus
        ]
        for record in processes
    ]
    headers = [[(f"Attached processes in partition {partition}", 4), ("IPU", 2)]]
    return _table(widths, headers, ["PID", "Command", "Time", "User", "ID", "Clock"], groups)


def _clock(record) -> str:
    return f"{record.clock_hz / 1e6:.0f}MHz"


def _held_for(seconds: float) -> str:
    """How long a process has held its IPUs (wall-clock, as gc-monitor's Time column)."""
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    return f"{seconds // 60}m" if seconds < 7200 else f"{seconds // 3600}h"


def monitor_text(
    system_name: str | None = None, pid: int | None = None, card_info: bool = True, all_partitions: bool = False
) -> str:
    """What ``gc-monitor`` prints: the partition's card table, then the processes attached in it.

    Args:
      system_name: The simulated system (partition) to show; default ``ipu.system.system_name()``.
      pid: Show only this process's IPUs. Default: every running ipu-teach process of this user.
      card_info: False leaves out the card table (gc-monitor's ``--no-card-info``).
      all_partitions: Also show the other simulated systems processes are attached to (``--all-partitions``).
    """
    system_name = _known(system_name)
    processes = [record for record in attachments.attached_processes() if pid is None or record.pid == pid]
    shown = [system_name] + sorted({r.system for r in processes} - {system_name}) if all_partitions else [system_name]
    now, lines = time.time(), []
    for name in shown:
        if card_info:
            lines += card_table(name)
        lines += process_table(name, [r for r in processes if r.system == name], now)
    elsewhere = sorted({r.system for r in processes} - set(shown))
    if elsewhere:
        lines.append(f"Processes are also attached to the simulated {', '.join(elsewhere)}: see --all-partitions.")
    if pid is not None and not processes:
        lines.append(
            f"Process {pid} holds no simulated IPUs: it has not run configure_ipu_system, has released its IPUs "
            "(ipu.system.reset()), compiles only (PRE_COMPILE / NEVER), or is not running."
        )
    lines.append(NOTE.format(system=system_name))
    return "\n".join(lines)


def gc_info(system_name: str | None = None, print_fn=None) -> None:
    """Prints the simulated system's devices as ``gc-info -l`` lists a real one's (ipu-teach only).

    IDs 0 to N-1 are the single IPUs, then come the devices of 2, 4, 8... IPUs: the IDs ``select_ipus`` takes
    and ``ipu.system.current().device_id`` reports. Each device's IPUs are listed under it.

    Args:
      system_name: One of ``ipu.system.SYSTEMS``; default the system in use (``ipu.system.system_name()``).
      print_fn: Called with the text; default ``print`` (as Keras' ``Model.summary``).

    Example:

    >>> ipu.gc_tools.gc_info()                  # doctest: +ELLIPSIS
    Graphcore device listing:
    Partition: sim-pod16 [active]
    -+- Id: [0], target: [Fabric], IPU-M host: [sim-m2000-0], IPU#: [3]
    ...
    -+- Id: [30], target: [Multi IPU]
     |--- Id: [0], DNC Id: [0], IPU-M host: [sim-m2000-0], IPU#: [3]
    ...
     |--- Id: [15], DNC Id: [15], IPU-M host: [sim-m2000-3], IPU#: [0]
    """
    (print_fn or print)(device_listing(system_name))


def gc_monitor(pid: int | None = None, card_info: bool = True, all_partitions: bool = False, print_fn=None) -> None:
    """Prints which simulated IPUs ipu-teach processes hold, as ``gc-monitor`` shows a real system (ipu-teach only).

    A process holds IPUs from ``configure_ipu_system`` (with a connection that runs programs) until
    ``ipu.system.reset()`` or its end; the notebook you run this in is one such process, and so is every other
    running notebook or script of yours. One row per IPU held: process id, command, how long it has held the
    IPU (wall-clock time), user, IPU ID, clock.

    Args:
      pid: Show only this process (``os.getpid()`` for this one). Default: all of them.
      card_info: False leaves out the table of machines and IPUs (``--no-card-info``).
      all_partitions: Also show processes attached to another simulated system (``--all-partitions``).
      print_fn: Called with the text; default ``print``.

    Example:

    >>> import os
    >>> config = ipu.config.IPUConfig()
    >>> config.auto_select_ipus = 2
    >>> config.configure_ipu_system()
    >>> lines = []
    >>> ipu.gc_tools.gc_monitor(pid=os.getpid(), card_info=False, print_fn=lines.append)
    >>> rows = [row.split("|") for row in lines[0].splitlines()]
    >>> [cells[5].strip() for cells in rows if len(cells) > 5 and cells[1].strip() == str(os.getpid())]
    ['0', '1']
    """
    (print_fn or print)(monitor_text(None, pid, card_info, all_partitions))
