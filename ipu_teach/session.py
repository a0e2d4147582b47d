"""The process-wide state of a session, reset in one call: ``ipu_teach.reset_session()``.

Modules that keep state for the whole session register how to reset it when they are imported (a
module never imported has nothing to reset). There are two kinds:

- Keras session state: layer-name counters, Keras' random generator, the generator of unseeded
  ``Dataset.shuffle`` seeds. ``keras.backend.clear_session()`` resets these.
- IPU runtime state (``runtime=True``): the configured IPU system, the executable cache setting,
  report capture. In Graphcore's TensorFlow these belong to the Poplar runtime, not to the Keras
  session, so ``clear_session()`` keeps them: a script may configure the IPUs, turn the cache on,
  clear the session and build its model.

The IPU runtime's values live here, in :data:`runtime` (one field each, saying which module changes it), so a
reader finds every process-wide setting in one place; the modules that own them register what else a reset does
(detaching the simulated IPUs, say). :func:`reset_session` resets both, as a new Python process starts. This
module imports nothing of ours: every layer may use it.
"""

from dataclasses import dataclass, field, fields
from typing import Callable

_resets: list = []


@dataclass
class RuntimeState:
    """The IPU runtime's state, which ``clear_session`` keeps and ``reset_session`` sets back to these values."""

    configured: object = None
    """``ipu/system.py``: what ``configure_ipu_system`` attached (a ``SystemConfiguration``), None when nothing is."""
    system_name: object = None
    """``ipu/system.py``: the simulated system ``use_system`` chose, None for the default (an IPU-POD16)."""
    rounding_seed: int = 0
    """``ipu/system.py``: the seed of stochastic rounding's generator in the next configured system."""
    executable_cache_path: object = None
    """``ipu/executable_cache.py``: the folder ``enable`` gave (``TF_POPLAR_FLAGS``' folder is read apart)."""
    unwritable_cache_folders: set = field(default_factory=set)
    """``ipu/executable_cache.py``: the cache folders a write failed in (warned once, not tried again)."""
    loop_timings: dict = field(default_factory=dict)
    """``ipu/custom_loop.py``: ``{program name: LoopTiming}`` of what ``strategy.run`` or PopTorch ran."""
    report_overrides: list = field(default_factory=list)
    """``profiling/capture.py``: the profiling options of the open ``auto_report`` blocks, innermost last."""
    reports_written: list = field(default_factory=list)
    """``profiling/capture.py``: the paths of the reports written, oldest first."""

    def reset(self) -> None:
        """Every field back to its starting value (in place: modules hold this object, never its fields)."""
        fresh = RuntimeState()
        for one in fields(self):
            setattr(self, one.name, getattr(fresh, one.name))


runtime = RuntimeState()


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
    if not keep_runtime:
        runtime.reset()
    for reset, of_runtime in list(_resets):
        if not (keep_runtime and of_runtime):
            reset()
