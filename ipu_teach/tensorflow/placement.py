"""``tf.device``: where TensorFlow places the ops created inside. ipu-teach computes every op on the host's
numpy (the simulated IPU runs the functions ``IPUStrategy.run`` calls), so the scope changes nothing; it is
accepted so that scripts placing their input tensors on the CPU run.

Example:

>>> import ipu_teach.tensorflow as tf
>>> with tf.device("cpu"):
...     a = tf.constant([1.0, 2.0])
>>> a.numpy()
array([1., 2.], dtype=float32)
"""

import contextlib


@contextlib.contextmanager
def device(device_name):
    """A scope for ops placed on ``device_name`` (``"cpu"``, ``"/device:CPU:0"``...); see the module."""
    if not isinstance(device_name, str) and device_name is not None:
        raise TypeError(f"tf.device: expected a device name such as 'cpu', got {device_name!r}")
    yield
