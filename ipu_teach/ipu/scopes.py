"""``ipu.scopes``: TensorFlow's placement scopes for the IPU (graphcore/tensorflow tensorflow/python/ipu/scopes.py).

``ipu_scope`` is TensorFlow 1's placement of ops on an IPU device, accepted in TensorFlow 2 scripts. In
TensorFlow 2 a function runs on the IPU when ``IPUStrategy.run`` calls it (``ipu.custom_loop``); ops created
inside ``ipu_scope`` outside such a call run eagerly on the host in ipu-teach, as the numerics are the CPU's
anyway. ``outside_compilation_scope`` places the ops inside it on the host while the rest of the function runs
on the IPU: ipu-teach leaves them out of the IPU program it costs.

Example:

>>> with ipu.scopes.ipu_scope("/device:IPU:0"):
...     total = np.float32(1.0) + np.float32(2.0)
>>> float(total)
3.0
"""

import contextlib

from ..autograd.function import unrecorded
from . import custom_loop

_placed: list = []
"""The ``ipu_scope`` blocks open now."""
_outside: list = []
"""The ``outside_compilation_scope`` blocks open now (at most one: they do not nest)."""


@contextlib.contextmanager
def ipu_scope(device):
    """A scope placing ops on ``device`` (``"/device:IPU:0"``); see the module."""
    if not isinstance(device, str) or "IPU" not in device.upper():
        raise ValueError(f"ipu_scope: expected an IPU device name such as '/device:IPU:0', got {device!r}")
    _placed.append(device)
    try:
        yield
    finally:
        _placed.pop()


@contextlib.contextmanager
def outside_compilation_scope(name="outside"):
    """Runs the ops inside it on the host, outside the IPU program being compiled (Graphcore's TensorFlow).

    Useful for an operation the IPU does not support or suits badly. Allowed only where a program is being
    compiled for the IPU: inside a function ``strategy.run`` calls, or an ``ipu_scope``. The ops compute as
    everywhere in ipu-teach, on the host's numpy; they are left out of the IPU program that is costed (the
    transfers of their inputs to the host and of their results back are not costed).

    Args:
      name: A name for the scope. Default: ``"outside"``.

    Raises:
      ValueError: outside an IPU program ("only allowed in XLA context", as TensorFlow says), or inside
        another ``outside_compilation_scope``.

    Example:

    >>> with ipu.scopes.ipu_scope("/device:IPU:0"):
    ...     b = np.float32(3.0) * 3
    ...     with ipu.scopes.outside_compilation_scope():
    ...         c = b + 2                     # on the host
    ...     d = b + c
    >>> float(d)
    20.0
    """
    if not (_placed or custom_loop.running()):
        raise ValueError(
            "outside_compilation_scope is only allowed in XLA context: use it inside a function run by "
            "strategy.run (or an ipu.scopes.ipu_scope)"
        )
    if _outside:
        raise ValueError("Illegal nesting of outside_compilation_scope")
    _outside.append(name)
    try:
        with unrecorded():
            yield
    finally:
        _outside.pop()
