"""Keras' progress bar: ``938/938 [====] - 3s 3ms/step - loss: 0.3175 - accuracy: 0.9047``.

In a terminal or Jupyter it rewrites one line with a carriage return; when output goes to a file
or a pipe it prints only the finished line. Updates are throttled by progress (not by wall
clock), so a notebook's output is the same every run. Who measures the time decides what it
means: ``time_note`` labels it (the simulated IPU says ``simulated``).
"""

import sys

_BAR_WIDTH = 30


def format_values(values) -> str:
    return "".join(
        f" - {name}: {value:.4f}" if abs(value) > 1e-3 else f" - {name}: {value:.4e}" for name, value in values
    )


def format_duration(seconds: float) -> str:
    """Whole seconds, as Keras prints an epoch's time (``0s`` below half a second)."""
    return f"{seconds:.0f}s"


def format_eta(seconds: float) -> str:
    """Keras' ETA: ``45s``, ``2:05``, ``1:02:05``."""
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if seconds >= 60:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds}s"


def format_per_step(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


def dynamic_output(stream) -> bool:
    """True in a terminal or a Jupyter kernel's output stream, where one line can be rewritten.
    The stream itself is asked: ipykernel merely being imported (nbval, tools) is no sign of a kernel."""
    in_kernel = type(stream).__module__.startswith("ipykernel")
    return bool(getattr(stream, "isatty", lambda: False)()) or in_kernel


class Progbar:
    def __init__(self, target, verbose=1, stream=None, time_note="", updates=20):
        self.target = target
        self.verbose = verbose
        self.stream = stream or sys.stdout
        self.time_note = time_note
        self.dynamic = dynamic_output(self.stream)
        self._every = max(1, (target or 1) // updates)
        self._last_shown = 0
        self._shown_width = 0
        self._finished = False
        self._after_first_step = None
        self.seconds = self.seconds_per_step = 0.0
        """The last update's time and per-step estimate, as the line shows them."""

    def _bar(self, current) -> str:
        if self.target is None:
            return f"{current:7d}/Unknown"
        digits = len(str(self.target))
        done = int(_BAR_WIDTH * current / self.target)
        bar = "=" * max(done - 1, 0) + (">" if current < self.target else "=") * (done > 0)
        return f"{current:{digits}d}/{self.target} [" + bar + "." * (_BAR_WIDTH - len(bar)) + "]"

    def _step_estimate(self, current, elapsed) -> float:
        """TF's estimate of one step's time: once step 1 has been seen on its own, the steps after it, so
        a first step that compiled the program does not count (TF ``Progbar._estimate_step_duration``:
        "35s 3ms/step" for a first epoch of 937 steps that compiled for 32 s). With several steps per
        execution step 1 is never seen alone, and the estimate is the average."""
        if current == 1 and self._after_first_step is None:
            self._after_first_step = elapsed
        if self._after_first_step is not None and current > 1:
            return (elapsed - self._after_first_step) / (current - 1)
        return elapsed / max(current, 1)

    def _timing(self, current, elapsed, finished) -> str:
        per_step = self.seconds_per_step
        if not finished:
            return "" if self.target is None else f" - ETA: {format_eta(per_step * (self.target - current))}"
        note = f" {self.time_note}" if self.time_note else ""
        return f" - {format_duration(elapsed)} {format_per_step(per_step)}{note}"

    def update(self, current, values=(), elapsed=0.0, finalize=None) -> None:
        """Show progress after ``current`` steps, ``elapsed`` seconds in; ``finalize`` ends the line
        (by default once the target is reached; fit ends it itself, after validation, as Keras does)."""
        if self._finished:
            return
        finished = (self.target is not None and current >= self.target) if finalize is None else finalize
        self._finished = finished
        # verbose 2 estimates only when the epoch ends (TF), so it never sees step 1 alone
        self.seconds, self.seconds_per_step = (
            elapsed,
            (self._step_estimate(current, elapsed) if self.verbose != 2 else elapsed / max(current, 1)),
        )
        if self.verbose != 1:
            if finished and self.verbose == 2:
                note = f" {self.time_note}" if self.time_note else ""
                self.stream.write(
                    f"{current}/{self.target or 'Unknown'} - {format_duration(elapsed)}"
                    f"{format_values(values)} - {format_per_step(self.seconds_per_step)}{note}\n"
                )
                self.stream.flush()
            return
        if not finished and (not self.dynamic or current - self._last_shown < self._every):
            return
        self._last_shown = current
        line = self._bar(current) + self._timing(current, elapsed, finished) + format_values(values)
        if self.dynamic:  # blank what is left of a longer previous line, as Keras does
            line, self._shown_width = "\r" + line.ljust(self._shown_width), len(line)
        self.stream.write(line + ("\n" if finished else ""))
        self.stream.flush()
