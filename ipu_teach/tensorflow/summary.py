"""``tf.summary``: scalars, histograms and images written to event files TensorBoard opens.

As TensorFlow 2: ``writer = tf.summary.create_file_writer(logdir)``, then inside ``with writer.as_default():``
``tf.summary.scalar("loss", value, step=epoch)``. A summary written with no default writer is not written
(the call returns False); without a ``step`` and with none set by ``tf.summary.experimental.set_step``
it is TensorFlow's ValueError. The files are written by :mod:`ipu_teach.keras.event_files` (no TensorFlow).
"""

from __future__ import annotations

import contextlib
import types

import numpy as np

from ..keras.event_files import EventFileWriter, histogram_value, images_value, scalar_value, to_uint8
from ..not_simulated import NotSimulatedError

_writers: list = []  # the default writer is the last; None for a no-op writer
_state = {"step": None, "record_if": True}


class SummaryWriter:
    """A writer of one event file in ``logdir`` (made on the first summary)."""

    def __init__(self, logdir=None, filename_suffix=None):
        self._events = EventFileWriter(logdir, filename_suffix) if logdir is not None else None

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Make this the default writer inside the ``with`` block (and ``step`` the default step, if given)."""
        saved_step = _state["step"]
        _writers.append(self)
        if step is not None:
            _state["step"] = step
        try:
            yield self
        finally:
            _writers.pop()
            _state["step"] = saved_step
            self.flush()

    def set_as_default(self, step=None) -> None:
        _writers.append(self)
        if step is not None:
            _state["step"] = step

    def init(self) -> None:
        """Accepted for TensorFlow compatibility: the file is made with the first summary."""

    def flush(self) -> None:
        if self._events is not None:
            self._events.flush()

    def close(self) -> None:
        if self._events is not None:
            self._events.close()

    def write(self, step, values) -> None:
        if self._events is not None:
            self._events.write(step, values)


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None, **kwargs):
    """A summary writer for ``logdir`` (events are flushed as written: ``max_queue`` and ``flush_millis`` have
    nothing to wait for)."""
    return SummaryWriter(logdir, filename_suffix)


def create_noop_writer():
    return SummaryWriter(None)


@contextlib.contextmanager
def record_if(condition):
    """Write summaries inside the block only when ``condition`` (a bool or a callable giving one) holds."""
    saved = _state["record_if"]
    _state["record_if"] = condition
    try:
        yield
    finally:
        _state["record_if"] = saved


def should_record_summaries() -> bool:
    condition = _state["record_if"]
    return bool(_writers) and bool(condition() if callable(condition) else condition)


def _write(make_value, step) -> bool:
    if not should_record_summaries():
        return False
    step = _state["step"] if step is None else step
    if step is None:
        raise ValueError(
            "No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()"
        )
    _writers[-1].write(int(np.asarray(step)), make_value())
    return True


def _numpy(data):
    return np.asarray(data.numpy() if hasattr(data, "numpy") else getattr(data, "data", data))


def scalar(name, data, step=None, description=None) -> bool:
    """Write a scalar summary (TensorBoard's Scalars); True if written."""
    value = _numpy(data)
    if value.size != 1:
        raise ValueError(f"tf.summary.scalar {name!r}: data must be a scalar, got shape {value.shape}")
    return _write(lambda: [scalar_value(name, float(value.reshape(())))], step)


def histogram(name, data, step=None, buckets=None, description=None) -> bool:
    """Write a histogram of ``data``'s values in ``buckets`` (default 30) buckets; True if written."""
    return _write(lambda: [histogram_value(name, _numpy(data), 30 if buckets is None else int(buckets))], step)


def image(name, data, step=None, max_outputs=3, description=None) -> bool:
    """Write up to ``max_outputs`` images of ``data`` (k, height, width, channels with 1, 3 or 4 channels)."""
    images = _numpy(data)
    if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
        raise ValueError(
            f"tf.summary.image {name!r}: data must have shape [k, height, width, channels] with 1, 3 or 4 "
            f"channels, got {images.shape}"
        )
    return _write(lambda: [images_value(name, to_uint8(images[: int(max_outputs)]))], step)


def flush(writer=None, name=None) -> None:
    target = writer if writer is not None else (_writers[-1] if _writers else None)
    if target is not None:
        target.flush()


def _set_step(step) -> None:
    _state["step"] = step


def _get_step():
    return _state["step"]


experimental = types.SimpleNamespace(set_step=_set_step, get_step=_get_step)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotSimulatedError(f"tensorflow.summary.{name}", globals())
