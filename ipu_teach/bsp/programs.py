"""Programs: the control flow the Engine runs, a tree of supersteps.

Leaves are supersteps (``Execute`` a compute set, ``Copy`` = exchange only, host streams,
IPU-Link copies); ``Sequence`` and ``Repeat`` arrange them. ``Repeat(n, body)`` is costed once and
counted n times, so a loop of thousands of identical steps costs the host no more than one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compute import ComputeSet
from .errors import GraphError
from .exchange import Exchange
from .sync import SyncKind


class Program:
    """Base of every program node. ``label`` names the step in timelines and traces."""

    label = "program"


def _check_label(label):
    if not isinstance(label, str):
        raise GraphError(f"a program label must be a string, got {label!r}")


@dataclass(frozen=True, eq=False)
class Execute(Program):
    """One superstep: sync, exchange the compute set's inputs, then compute.

    ``sync=None`` means on-chip for one IPU and cross-IPU for several.
    """

    compute_set: ComputeSet
    exchange: Exchange = None
    sync: SyncKind = None

    def __post_init__(self):
        if not isinstance(self.compute_set, ComputeSet):
            raise GraphError(f"Execute needs a bsp.ComputeSet, got {type(self.compute_set).__name__}")
        if self.exchange is not None and not isinstance(self.exchange, Exchange):
            raise GraphError(f"Execute({self.compute_set.name!r}): exchange must be a bsp.Exchange")

    @property
    def label(self):
        return self.compute_set.name


@dataclass(frozen=True, eq=False)
class Copy(Program):
    """An exchange-only superstep (sync, then move bytes between tiles; no compute)."""

    exchange: Exchange
    sync: SyncKind = None

    def __post_init__(self):
        if not isinstance(self.exchange, Exchange):
            raise GraphError(f"Copy needs a bsp.Exchange, got {type(self.exchange).__name__}")

    @property
    def label(self):
        return self.exchange.name


def _as_link_bytes(nbytes, what):
    array = np.asarray(nbytes)
    if array.dtype.kind not in "iu" or array.ndim > 1 or (array < 0).any():
        raise GraphError(f"{what}: bytes must be a non-negative integer or one per IPU, got {nbytes!r}")
    return array.astype(np.int64)


@dataclass(frozen=True, eq=False)
class _HostStream(Program):
    """A stream of ``nbytes`` (a number, or one per IPU) over PCIe, after a host sync; the subclass says which way."""

    nbytes: object
    label: str = "host stream"

    def __post_init__(self):
        _check_label(self.label)
        object.__setattr__(self, "nbytes", _as_link_bytes(self.nbytes, f"stream {self.label!r}"))


@dataclass(frozen=True, eq=False)
class HostToDevice(_HostStream):
    """Stream ``nbytes`` (a number, or one per IPU) from the host over PCIe, after a host sync."""

    label: str = "host->device"


@dataclass(frozen=True, eq=False)
class DeviceToHost(_HostStream):
    """Stream ``nbytes`` (a number, or one per IPU) to the host over PCIe, after a host sync."""

    label: str = "device->host"


@dataclass(frozen=True, eq=False)
class IPULinkCopy(Program):
    """Each IPU sends ``nbytes`` (a number, or one per IPU) over ``links`` of its IPU-Links (None: all)."""

    nbytes: object
    links: int = None
    label: str = "ipu-link copy"

    def __post_init__(self):
        _check_label(self.label)
        object.__setattr__(self, "nbytes", _as_link_bytes(self.nbytes, f"IPU-Link copy {self.label!r}"))
        if self.links is not None and (not isinstance(self.links, int) or self.links <= 0):
            raise GraphError(f"IPU-Link copy {self.label!r}: links must be a positive integer, got {self.links!r}")


def _check_programs(programs, what):
    for child in programs:
        if not isinstance(child, Program):
            raise GraphError(f"{what}: expected programs, got {type(child).__name__} ({child!r:.60})")


class Sequence(Program):
    """Run programs one after another. ``Sequence(a, b)`` or ``Sequence([a, b])``."""

    def __init__(self, *programs, label: str = "sequence"):
        if len(programs) == 1 and isinstance(programs[0], (list, tuple)):
            programs = tuple(programs[0])
        _check_programs(programs, f"Sequence {label!r}")
        _check_label(label)
        self.programs, self.label = tuple(programs), label

    def __repr__(self):
        return f"Sequence({', '.join(map(repr, self.programs))})"


class Repeat(Program):
    """Run ``body`` ``count`` times."""

    def __init__(self, count: int, body: Program, label: str = "repeat"):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise GraphError(f"Repeat {label!r}: count must be a non-negative integer, got {count!r}")
        _check_programs([body], f"Repeat {label!r}")
        _check_label(label)
        self.count, self.body, self.label = int(count), body, label

    def __repr__(self):
        return f"Repeat({self.count}, {self.body!r})"
