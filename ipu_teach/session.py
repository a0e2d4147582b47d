"""The process-wide state of a session, reset in one call: ``ipu_teach.reset_session()``.

Modules that keep state for the whole session register how to reset it when they are imported (a
module never imported has nothing to reset). There are two kinds:

- Keras session state: layer-name counters, Keras' random generator, the generator of unseeded
  ``Dataset.shuffle`` seeds. ``keras.backend.clear_session()`` resets these.
- IPU runtime state (``runtime=True``): the configured IPU system, the executable cache setting,
  report capture. In Graphcore's TensorFlow these belong to the Poplar runtime, not to the Keras
  session, so ``clear_session()`` keeps them: a script may configure the IPUs, turn the cache on,
  clear the session and build its model.

:func:`reset_session` resets both, as a new Python process starts. This module imports nothing of
ours: every layer may use it.
"""

from typing import Callable

_resets: list = []


def on_reset(reset: Callable[[], None] = None, *, runtime: bool = False):
    """Register ``reset`` (no arguments) to run on :func:`reset_session`; ``runtime=True`` for IPU
    runtime state, which ``clear_session`` keeps. Usable as a decorator, with or without arguments."""
    if reset is None:
        return lambda function: on_reset(function, runtime=runtime)
    _resets.append((reset, runtime))
    return reset


def reset_session(keep_runtime: bool = False) -> None:
    """Reset every module-level state to what a new Python process starts with (only the Keras
    session state when ``keep_runtime``, as ``clear_session`` does)."""
    for reset, runtime in list(_resets):
        if not (keep_runtime and runtime):
            reset()
