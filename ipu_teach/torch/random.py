"""PyTorch's random number generators, on numpy's PCG64.

``torch.manual_seed(s)`` makes every draw that follows repeatable, as in PyTorch; the values are
numpy's, not PyTorch's (its Mersenne Twister and its sampling algorithms are not reproduced), so a
seeded script is deterministic here but draws other numbers than under real PyTorch.

Example:

>>> from ipu_teach import torch
>>> _ = torch.manual_seed(0); a = torch.randn(3)
>>> _ = torch.manual_seed(0); bool((torch.randn(3) == a).all())
True
"""

import numpy as np

from .. import session


class Generator:
    """A seedable source of random numbers (``torch.Generator``); ``manual_seed`` returns it, as PyTorch's."""

    def __init__(self, device="cpu"):
        self._seed = 67280421310721  # PyTorch's default seed
        self.numpy = np.random.default_rng(self._seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self.numpy = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        return self.numpy.bit_generator.state

    def set_state(self, state):
        self.numpy.bit_generator.state = state


default_generator = Generator()


@session.on_reset(runtime=True)
def _reseed() -> None:
    default_generator.manual_seed(67280421310721)


def manual_seed(seed) -> Generator:
    """Seed the default generator (every draw without a ``generator=`` argument); returns it.

    Example:

    >>> from ipu_teach import torch
    >>> _ = torch.manual_seed(0)
    >>> first = torch.rand(2)
    >>> _ = torch.manual_seed(0)
    >>> torch.equal(first, torch.rand(2))
    True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    value = int(np.random.SeedSequence().entropy % (2**63))
    default_generator.manual_seed(value)
    return value


def initial_seed() -> int:
    return default_generator.initial_seed()


def numpy_generator(generator=None) -> np.random.Generator:
    """The numpy generator behind ``generator`` (the default one when None)."""
    return (generator or default_generator).numpy
