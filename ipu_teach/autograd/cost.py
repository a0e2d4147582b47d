"""What an op costs, stated by the op itself so the IPU model can place and time it.

The simulated IPU never looks inside an op: it spreads ``grains`` (independent units of
work, each ``flops / grains`` FLOPs) over tiles and moves ``bytes_in`` / ``bytes_out``.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class OpCost:
    """Work of one op application: FLOPs, bytes read and written, and how it splits."""

    flops: int
    bytes_in: int
    bytes_out: int
    grains: int

    def __post_init__(self):
        if self.grains < 1:
            object.__setattr__(self, "grains", 1)

    @property
    def flops_per_grain(self) -> float:
        return self.flops / self.grains

    def scaled(self, factor: float) -> "OpCost":
        """The same op shape doing ``factor`` times the arithmetic (e.g. a backward pass)."""
        return OpCost(int(self.flops * factor), self.bytes_in, self.bytes_out, self.grains)

    def __add__(self, other: "OpCost") -> "OpCost":
        return OpCost(self.flops + other.flops, self.bytes_in + other.bytes_in,
                      self.bytes_out + other.bytes_out, max(self.grains, other.grains))
