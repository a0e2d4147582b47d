"""The three kinds of sync that end a BSP compute phase, and what each costs on a given IPU."""

from __future__ import annotations

import enum

from ..hardware import HOST


class SyncKind(enum.Enum):
    """Which parties wait for each other: the tiles of one IPU, all IPUs, or the IPUs and the host."""

    ON_CHIP = "on-chip"
    CROSS_IPU = "cross-IPU"
    HOST = "host"

    def cycles(self, spec, ipus: int = 1) -> int:
        """The sync's cost in cycles on ``spec`` (an IPUSpec) spanning ``ipus`` IPUs (a host sync grows with them:
        ``hardware.HostSpec.sync_cycles``)."""
        if self is SyncKind.HOST:
            return HOST.sync_cycles(spec, ipus)
        return spec.sync_cycles_on_chip if self is SyncKind.ON_CHIP else spec.sync_cycles_cross_ipu

    @property
    def is_global(self) -> bool:
        """True if every IPU waits for the slowest one (cross-IPU and host syncs)."""
        return self is not SyncKind.ON_CHIP
