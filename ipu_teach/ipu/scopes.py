"""``ipu.scopes.ipu_scope``: TensorFlow 1's placement of ops on an IPU device, accepted in TensorFlow 2 scripts.

In TensorFlow 2 a function runs on the IPU when ``IPUStrategy.run`` calls it (``ipu.custom_loop``); ops
created inside ``ipu_scope`` outside such a call run eagerly on the host in ipu-teach, as the numerics are the
CPU's anyway. The scope is accepted so that scripts written with it run.

Example:

>>> with ipu.scopes.ipu_scope("/device:IPU:0"):
...     total = np.float32(1.0) + np.float32(2.0)
>>> float(total)
3.0
"""

import contextlib


@contextlib.contextmanager
def ipu_scope(device):
    """A scope placing ops on ``device`` (``"/device:IPU:0"``); see the module."""
    if not isinstance(device, str) or "IPU" not in device.upper():
        raise ValueError(f"ipu_scope: expected an IPU device name such as '/device:IPU:0', got {device!r}")
    yield
