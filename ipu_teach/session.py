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
(detaching the simulated IPUs, say). :func:`reset_session` resets both, as a new Python process starts.

A third kind is not a setting: what the ``with`` blocks open now hold (the tapes being recorded, the layer calls
in progress). Each such stack is an :class:`OpenBlocks` kept beside the context manager that opens its blocks:
it is empty whenever no block is open, so a session has nothing of it to keep or reset.

This module imports nothing of ours: every layer may use it.
"""

import contextlib
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
    input_samples_per_second: object = None
    """``ipu/host.py``: the simulated input pipeline's rate (``simulate_input_pipeline``), None for a host that keeps
    up."""
    input_pipeline_overlapped: bool = True
    """``ipu/host.py``: whether that pipeline works beside the device (False: in the thread that calls programs)."""
    marked_losses: list = field(default_factory=list)
    """``poptorch/annotations.py``: the tensors ``poptorch.identity_loss`` marked in the forward being run."""

    def reset(self) -> None:
        """Every field back to its starting value (in place: modules hold this object, never its fields)."""
        fresh = RuntimeState()
        for one in fields(self):
            setattr(self, one.name, getattr(fresh, one.name))


runtime = RuntimeState()


class OpenBlocks(list):
    """The values of the ``with`` blocks open now, innermost last (a list: ``blocks[-1]`` is the innermost).

    One stack per kind of block (the tapes ``autograd.record`` collects, the layer calls in progress, ...), kept in
    the module whose context manager opens the blocks. Items given when it is made are its floor (``no_grad``'s
    stack starts with True: gradients are on outside every block)."""

    @contextlib.contextmanager
    def pushed(self, value):
        """A block holding ``value`` on top of the stack while it is open, taken off however the block ends."""
        depth = len(self)
        try:  # pushed inside the try: a Ctrl-C right after the push still pops it
            self.append(value)
            yield value
        finally:
            del self[depth:]


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
