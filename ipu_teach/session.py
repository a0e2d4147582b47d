"""The process-wide state of a session, reset in one call: ``ipu_teach.reset_session()``.

Modules that keep state for the whole session (Keras' layer-name counters and random generator,
the configured IPU system, the executable cache setting, report capture, the generator of unseeded
shuffles) register how to reset it when they are imported; a module never imported has nothing to
reset. ``keras.backend.clear_session()`` calls :func:`reset_session`, so a notebook or test starts
again as a new Python process would. This module imports nothing of ours: every layer may use it.
"""
from typing import Callable

_resets: list = []


def on_reset(reset: Callable[[], None]) -> Callable[[], None]:
    """Register ``reset`` (a function of no arguments) to run on every :func:`reset_session`."""
    _resets.append(reset)
    return reset


def reset_session() -> None:
    """Reset every module-level state to what a new Python process starts with."""
    for reset in list(_resets):
        reset()
