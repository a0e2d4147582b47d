"""Process-wide Keras state: layer auto-naming counters and the seeded random generator.

Keras names layers ``conv2d``, ``conv2d_1``, ... across every model in a session, and the
tutorial's printed summaries rely on that. Randomness (initial weights, dropout masks, shuffling)
comes from one generator with a fixed default seed, so a notebook prints the same numbers every time
it runs. ``clear_session()`` resets both (see ``ipu_teach.session``).
"""
import collections
import re

import numpy as np

from .. import session
from ..data import dataset

DEFAULT_SEED = 0
_uids = collections.defaultdict(int)
_rng = [np.random.default_rng(DEFAULT_SEED)]


def epsilon() -> float:
    return 1e-7


def floatx() -> str:
    return "float32"


def unique_name(prefix: str) -> str:
    """``prefix`` the first time, then ``prefix_1``, ``prefix_2``..."""
    count = _uids[prefix]
    _uids[prefix] += 1
    return prefix if count == 0 else f"{prefix}_{count}"


def numbered_name(prefix: str) -> str:
    """``prefix_1``, ``prefix_2``... (Keras numbers input layers from 1)."""
    _uids[prefix] += 1
    return f"{prefix}_{_uids[prefix]}"


def snake_case(class_name: str) -> str:
    """``MaxPooling2D`` -> ``max_pooling2d``, as Keras derives default layer names."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", class_name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()


def clear_session() -> None:
    """Start the Keras session again: layer names from scratch, the default seed (also for unseeded
    shuffles). The IPU runtime (configured system, executable cache, report capture) stays, as with
    Graphcore's TensorFlow; ``ipu_teach.reset_session()`` resets that too."""
    session.reset_session(keep_runtime=True)


@session.on_reset
def _reset_names_and_seed() -> None:
    _uids.clear()
    _rng[0] = np.random.default_rng(DEFAULT_SEED)


def rng() -> np.random.Generator:
    return _rng[0]


def set_random_seed(seed: int) -> None:
    """Seed weights, dropout and ``fit``'s shuffling, and the seeds of unseeded ``Dataset.shuffle`` calls."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"set_random_seed: the seed must be an integer >= 0, got {seed!r}")
    _rng[0] = np.random.default_rng(seed)
    dataset.seed_unseeded_shuffles(seed)
