"""``ipu.ipu_outfeed_queue.IPUOutfeedQueue``: results streamed from the IPU to the host, without a Python call.

A function run by ``strategy.run`` enqueues its results (a tensor, or a list, tuple or dict of them) at each
step; the host dequeues them after the call. ``IPUOutfeedMode.ALL`` (the default) keeps every enqueued
element and ``dequeue`` stacks them along a new first axis; ``IPUOutfeedMode.LAST`` keeps only the last.
What the host gets are eager tensors (read with ``.numpy()``), as in TensorFlow.
Each step's enqueued bytes are streamed to the host: ``ipu.custom_loop`` costs them in the program's outfeed.

Example:

>>> outfeed = ipu.ipu_outfeed_queue.IPUOutfeedQueue()
>>> for step in range(3):
...     outfeed.enqueue({"loss": np.float32(step) / 2})
>>> outfeed.dequeue()
{'loss': EagerTensor([0. , 0.5, 1. ], dtype=float32)}
>>> [element["loss"].numpy() for element in outfeed]  # dequeued: nothing left to iterate
[]
"""

import enum

import numpy as np

from .. import nest
from ..eager import tensor
from ..keras.engine import call_context
from ..keras.layers.base import forward_pass_number
from . import custom_loop


class IPUOutfeedMode(enum.Enum):
    """What ``dequeue`` gives: every enqueued element stacked (``ALL``), or the last one (``LAST``)."""

    ALL = "all"
    LAST = "last"


class IPUOutfeedQueue:
    """Collects what a function running on the IPU enqueues, for the host to dequeue.

    Args:
      outfeed_mode: ``IPUOutfeedMode.ALL`` (default, None) or ``IPUOutfeedMode.LAST``.
      device_ordinal, buffer_depth, optimise_latency: Accepted for Graphcore's signature.

    Raises:
      ValueError: for another ``outfeed_mode``.

    Example:

    >>> last = ipu.ipu_outfeed_queue.IPUOutfeedQueue(ipu.ipu_outfeed_queue.IPUOutfeedMode.LAST)
    >>> for step in range(3):
    ...     last.enqueue([step, 2.0 * step])   # Python numbers stream as TensorFlow's int32 and float32
    >>> last.dequeue()
    [EagerTensor(2, dtype=int32), EagerTensor(4., dtype=float32)]
    """

    def __init__(self, outfeed_mode=None, device_ordinal=None, buffer_depth=3, optimise_latency=False, **kwargs):
        mode = IPUOutfeedMode.ALL if outfeed_mode is None else outfeed_mode
        if not isinstance(mode, IPUOutfeedMode):
            raise ValueError(
                f"IPUOutfeedQueue: outfeed_mode must be ipu.ipu_outfeed_queue.IPUOutfeedMode.ALL or .LAST, "
                f"got {outfeed_mode!r}"
            )
        self.outfeed_mode = mode
        self._elements = []
        self._last = None
        self._enqueued_in = None

    def enqueue(self, tensors):
        """Adds ``tensors`` (a tensor, or a list, tuple or dict of them) to the queue, as they are now. In a call
        that only traces a graph (a Keras layer called to learn its output shape, the step the IPU compiler
        traces) nothing is added: TensorFlow puts the enqueue in a graph that never runs."""
        if call_context.tracing():
            return
        element = nest.map_structure(lambda value: tensor(np.array(custom_loop.host_array(value))), tensors)
        custom_loop.enqueued(element)
        self._elements = [element] if self.outfeed_mode is IPUOutfeedMode.LAST else [*self._elements, element]
        self._last = element
        self._enqueued_in = forward_pass_number()

    @property
    def enqueued(self) -> bool:
        """Inside a model's forward pass, whether this pass enqueued (TensorFlow's: in the graph being built, so
        a layer that enqueues ``if not queue.enqueued`` does it once per step); on the host, whether anything was
        ever enqueued."""
        number = forward_pass_number()
        if number is not None:
            return self._enqueued_in == number
        return self._last is not None

    def dequeue(self, wait_for_completion=False):
        """What was enqueued since the last ``dequeue``: each value stacked along a new first axis (``ALL``; a
        first axis of 0 when nothing was), or the last element enqueued (``LAST``).

        Raises:
          ValueError: if nothing was ever enqueued (there is no structure to give), with Graphcore's message.
        """
        if not self.enqueued:
            raise ValueError(
                "Trying to dequeue an outfeed which has not been enqueued. (Run the function that enqueues, with "
                "strategy.run, first.)"
            )
        if self.outfeed_mode is IPUOutfeedMode.LAST:
            return self._last
        elements, self._elements = self._elements, []
        if not elements:
            return nest.map_structure(lambda value: tensor(np.empty((0, *value.shape), value.dtype)), self._last)
        return _stacked(elements)

    def __iter__(self):
        """Each enqueued element in turn (the queue is emptied), as iterating TensorFlow 2's outfeed does."""
        elements, self._elements = self._elements, []
        return iter(elements)

    @property
    def deleter(self):
        return None


def _stacked(elements):
    """Elements of one structure as that structure of arrays stacked along a new first axis."""
    first = elements[0]
    if isinstance(first, dict):
        return {key: _stacked([element[key] for element in elements]) for key in first}
    if isinstance(first, (list, tuple)):
        items = [_stacked([element[i] for element in elements]) for i in range(len(first))]
        return items if isinstance(first, list) else tuple(items)
    return tensor(np.stack(elements))
