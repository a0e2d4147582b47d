"""``tf.cond``, ``tf.while_loop``, ``tf.control_dependencies``, ``tf.no_op``, ``tf.print``: graph control flow,
run eagerly as plain Python (ipu-teach runs every ``tf.function`` eagerly).

Example:

>>> import ipu_teach.tensorflow as tf
>>> tf.cond(tf.constant(2) > 1, lambda: "big", lambda: "small")
'big'
>>> tf.while_loop(lambda i, total: i < 4, lambda i, total: (i + 1, total + i), (0, 0))
(4, 6)
"""

import contextlib
import sys

import numpy as np


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` when ``pred`` holds, else ``false_fn()``."""
    return true_fn() if bool(np.asarray(pred)) else false_fn()


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, maximum_iterations=None, **kw):
    """Runs ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)``, at most ``maximum_iterations`` times;
    returns the final loop variables in their structure (a single variable: itself)."""
    single = not isinstance(loop_vars, (list, tuple))
    values = [loop_vars] if single else list(loop_vars)
    iterations = 0
    while bool(np.asarray(cond(*values))) and (maximum_iterations is None or iterations < maximum_iterations):
        result = body(*values)
        values = [result] if single else list(result)
        iterations += 1
    if single:
        return values[0]
    return values if isinstance(loop_vars, list) else tuple(values)


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Nothing to order: eager ops already run in program order."""
    yield


def no_op(name=None):
    """Nothing: an op that does nothing (eagerly, None)."""
    return None


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001 (tf.print)
    """Prints ``inputs`` as ``tf.print`` does: tensors as their values (numpy's format), to standard error
    unless ``output_stream`` is another stream (``sys.stdout``)."""
    shown = [np.asarray(value) if hasattr(value, "shape") else value for value in inputs]
    (sys.stderr if output_stream is None else output_stream).write(sep.join(str(value) for value in shown) + end)
