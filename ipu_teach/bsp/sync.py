"""The three kinds of sync that end a BSP compute phase, and what each costs on a given IPU."""

from __future__ import annotations

import enum


class SyncKind(enum.Enum):
    """Which parties wait for each other: the tiles of one IPU, all IPUs, or the IPUs and the host."""

    ON_CHIP = "on-chip"
    CROSS_IPU = "cross-IPU"
    HOST = "host"

    def cycles(self, spec) -> int:
        """The sync's cost in cycles on ``spec`` (an IPUSpec)."""
        return {
            SyncKind.ON_CHIP: spec.sync_cycles_on_chip,
            SyncKind.CROSS_IPU: spec.sync_cycles_cross_ipu,
            SyncKind.HOST: spec.sync_cycles_host,
        }[self]

    @property
    def is_global(self) -> bool:
        """True if every IPU waits for the slowest one (cross-IPU and host syncs)."""
        return self is not SyncKind.ON_CHIP
