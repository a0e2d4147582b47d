"""A training step changes the model all at once or not at all.

Ctrl-C (Jupyter's "interrupt kernel") raises ``KeyboardInterrupt`` between any two lines of Python. A step
that wrote each weight as soon as it was computed would, interrupted, leave some weights updated and others
not, with the optimizer's ``iterations`` counting a step that only part of the model took. So the code of a
step only *assigns* its new values (weights, optimizer slots, the step count, BatchNormalization's moving
statistics); they are written together when the step returns, with SIGINT held back until the last one is
written and delivered right after. Interrupted, the model is as before the step or as after it: as in Keras,
where a step is one call into a TensorFlow graph, which Ctrl-C does not split.

The open step lives in a context variable set inside ``contextvars.Context.run``, which Python itself leaves
on return or on any exception: no cleanup line that an interrupt could skip, and each thread has its own.

Example:

>>> from ipu_teach.keras.engine import atomic_step
>>> weight = keras.layers.Dense(1).add_weight("w", (2,), initializer="ones")
>>> def add_one():
...     atomic_step.assign_all([(weight, "data", weight.data + 1)])
...     return weight.data, atomic_step.latest(weight, "data")   # not written until the step returns
>>> atomic_step.run(add_one)
(array([1., 1.], dtype=float32), array([2., 2.], dtype=float32))
>>> weight.data
array([2., 2.], dtype=float32)
"""

import contextvars
import signal
import threading

_writes = contextvars.ContextVar("ipu_teach_open_step", default=None)
"""The open step's assignments, {(id(obj), name): (obj, name, value)}; None outside a step."""


def run(compute, *args):
    """Runs ``compute(*args)`` as one step: the assignments made in it are written together after it
    returns, and none if it raises. Inside a step, it joins that step (an optimizer's update inside a model's
    training step is written with the moving statistics of that step's forward pass)."""
    if _writes.get() is not None:
        return compute(*args)
    writes = {}
    result = contextvars.copy_context().run(_collect, writes, compute, args)
    _write_all(writes.values())
    return result


def _collect(writes, compute, args):
    _writes.set(writes)
    return compute(*args)


def assign_all(assignments) -> None:
    """``obj.name = value`` for each ``(obj, name, value)``: when the open step returns, or now (all at once)
    outside a step."""
    writes = _writes.get()
    if writes is None:
        _write_all(assignments)
    else:
        writes.update({(id(obj), name): (obj, name, value) for obj, name, value in assignments})


def latest(obj, name):
    """``obj.name`` as the open step will leave it: what was assigned to it in this step, else its value."""
    pending = (_writes.get() or {}).get((id(obj), name))
    return getattr(obj, name) if pending is None else pending[2]


def _write_all(assignments) -> None:
    """Writes every assignment with SIGINT held back, then delivers a SIGINT that came meanwhile to the
    handler that was there (Python's raises KeyboardInterrupt). Signals reach only the main thread, and a
    handler installed outside Python (``getsignal`` gives None) cannot be put back: there, nothing to hold."""
    assignments = list(assignments)
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        for obj, name, value in assignments:
            setattr(obj, name, value)
        return
    received = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        for obj, name, value in assignments:
            setattr(obj, name, value)
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        signal.raise_signal(signal.SIGINT)
