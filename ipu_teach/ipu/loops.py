"""``ipu.loops`` (``from tensorflow.python.ipu import loops``): Graphcore's on-device loops, ``repeat`` and
``while_loop``, in a function that ``strategy.run`` runs.

On the IPU the loop is part of the compiled program: each iteration takes its batch from the infeed (when one is
given) and calls ``body`` with the loop-carried values followed by the infeed's element (a dict of string keys as
keyword arguments), and ``body`` returns the new loop-carried values. Here the body runs on the host's numpy,
once per iteration; each iteration is a step of the device loop ``ipu.custom_loop`` costs, as a ``for _ in
tf.range(n)`` loop over an infeed is. Source: graphcore/tensorflow ``tensorflow/python/ipu/loops.py``.

Example:

>>> def body(total, x):
...     return total + x.sum()
>>> import ipu_teach.tensorflow as tf
>>> infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(tf.data.Dataset.from_tensors(np.ones(3, np.float32)).repeat())
>>> float(ipu.loops.repeat(4, body, [0.0], infeed))
12.0
"""

import inspect

import numpy as np

from ..eager import python_default
from . import custom_loop


def repeat(n, body, inputs=None, infeed_queue=None, use_while_v1=True):
    """Calls ``body`` ``n`` times, each time on the loop-carried values ``inputs`` (a list, or None for none) and
    the infeed's next element; returns the final values (one value alone, None for a loop without any).

    Raises:
      TypeError: if ``body`` cannot take the values and the infeed's element, or returns values of other types,
        with Graphcore's messages.
    """
    return while_loop(lambda *args: True, body, inputs, infeed_queue, maximum_iterations=int(n))


def while_loop(condition, body, inputs=None, infeed_queue=None, maximum_iterations=None, use_while_v1=True):
    """Calls ``body`` while ``condition`` of the loop-carried values holds (and at most ``maximum_iterations``
    times), as :func:`repeat` does; ``condition`` is not given the infeed's element."""
    values = [python_default(value) for value in _as_list(inputs)]
    iteration = 0
    while (maximum_iterations is None or iteration < maximum_iterations) and bool(np.asarray(condition(*values))):
        element = next(infeed_queue) if infeed_queue is not None else custom_loop.dequeued(())  # a device-loop step
        args, kwargs = _body_arguments(element if infeed_queue is not None else [])
        _check_arity(body, values, args, kwargs, infeed_queue)
        outputs = [python_default(value) for value in _as_list(body(*values, *args, **kwargs)) if value is not None]
        if [value.dtype for value in outputs] != [value.dtype for value in values]:
            raise TypeError(
                "Mismatch between input types and output types for loop body: "
                f"{[v.dtype.name for v in values]} vs {[v.dtype.name for v in outputs]}."
            )
        values, iteration = outputs, iteration + 1
    if infeed_queue is not None and iteration and not infeed_queue.dequeued:
        raise ValueError("The infeed queue has not been dequeued.")
    return None if not values else values[0] if len(values) == 1 else values


def _as_list(values) -> list:
    if values is None:
        return []
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _body_arguments(element) -> tuple:
    """The body's extra positional and keyword arguments from an infeed element (Graphcore's _body_arguments): a
    single dict of string keys is unpacked as keywords."""
    element = _as_list(element)
    if len(element) == 1 and isinstance(element[0], dict) and all(isinstance(k, str) for k in element[0]):
        return [], element[0]
    return element, {}


def _check_arity(body, values, args, kwargs, infeed_queue) -> None:
    try:
        inspect.signature(body).bind(*values, *args, **kwargs)
    except TypeError as error:
        extra = f" and {len(args) + len(kwargs)} additional inputs from infeed" if infeed_queue is not None else ""
        raise TypeError(
            "Supplied loop body function cannot be called with the specified inputs. You specified "
            f"{len(values)} inputs: {values}{extra}, but the loop body needs something else ({error})."
        ) from None
