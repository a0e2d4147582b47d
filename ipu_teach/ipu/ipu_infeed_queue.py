"""``ipu.ipu_infeed_queue.IPUInfeedQueue``: a dataset streamed to the IPU, one element per step of a device loop.

In Graphcore's TensorFlow 2 the infeed is an iterator over the dataset whose elements the compiled program
takes itself, step after step, with no call back to Python: ``next(iterator)`` inside a ``for _ in
tf.range(n)`` loop of a function run by ``strategy.run`` is one step of an on-device loop of n steps
(``ipu.custom_loop`` counts them, like ``steps_per_execution``). Iterating a dataset inside an
``IPUStrategy`` that has ``enable_dataset_iterators`` (the default) gives the same: ``strategy.run`` feeds
such an iterator passed to it through an infeed.

Example:

>>> import ipu_teach.tensorflow as tf
>>> dataset = tf.data.Dataset.from_tensor_slices(np.arange(6, dtype=np.float32)).batch(2, drop_remainder=True)
>>> infeed = ipu.ipu_infeed_queue.IPUInfeedQueue(dataset)
>>> next(infeed), next(iter(infeed))
(array([0., 1.], dtype=float32), array([2., 3.], dtype=float32))
"""

from . import custom_loop


class IPUInfeedQueue:
    """Streams ``dataset``'s elements to the IPU: an iterator, as in TensorFlow 2 (``iter`` gives itself).

    Args:
      dataset: A ``tf.data.Dataset`` (batched with ``drop_remainder=True``: the IPU's shapes are fixed).
      prefetch_depth: How many elements Poplar may prefetch, 1 to 255 (the simulated host always keeps up unless
        ``ipu.host.simulate_input_pipeline`` says otherwise). Default: None, 1.
      device_ordinal, optimise_latency: Accepted for Graphcore's signature; the simulated infeed's cost is its
        bytes over the host link.

    Raises:
      TypeError: if ``dataset`` is not a dataset (something iterable).
      ValueError: if its elements' shapes are not all known (a batch without ``drop_remainder=True``), or for a
        ``prefetch_depth`` out of range, with Graphcore's messages.
    """

    def __init__(self, dataset, device_ordinal=None, prefetch_depth=None, optimise_latency=False, **kwargs):
        if not hasattr(dataset, "__iter__") or isinstance(dataset, (str, bytes)):
            raise TypeError(
                f"IPUInfeedQueue: expected a tf.data.Dataset, got a {type(dataset).__name__}; make one with "
                "tf.data.Dataset.from_tensor_slices(...).batch(batch_size, drop_remainder=True)"
            )
        for spec in _specs(getattr(dataset, "element_spec", None)):
            if any(d is None for d in spec.shape):
                raise ValueError(
                    f"Output shape {spec.shape} is not fully defined. If using tf.Dataset.batch, set "
                    "`drop_remainder=True`. (The IPU's program has fixed shapes: every batch must have the same size.)"
                )
        if prefetch_depth is not None and not 0 < prefetch_depth < 256:
            raise ValueError(f"prefetch_depth must be greater than zero and less than 256, but it is {prefetch_depth}")
        self._dataset = dataset
        self._iterator = None
        self.dequeued = False
        """Whether a step took an element (Graphcore's property)."""

    @property
    def initializer(self):
        """TensorFlow 1's initializer op: nothing to run here (the iterator starts on first use)."""
        return None

    def __iter__(self):
        return self

    def __next__(self):
        if self._iterator is None:
            self._iterator = iter(self._dataset)
        self.dequeued = True
        return custom_loop.dequeued(next(self._iterator))

    def get_next(self):
        return next(self)

    def deleter(self):
        """Forget the iterator: the next element is the dataset's first again."""
        self._iterator = None


class InfeedIterator:
    """An iterator over a dataset created in an IPUStrategy's scope, as ``strategy.run`` passes it on: each
    ``next`` is an infeed dequeue (one step of the device loop), from the same underlying iterator."""

    def __init__(self, iterator):
        self._iterator = iterator

    def __iter__(self):
        return self

    def __next__(self):
        return custom_loop.dequeued(next(self._iterator))

    get_next = __next__


def _specs(spec) -> list:
    """The TensorSpecs of a dataset's ``element_spec`` (a spec, or a tuple, list or dict of them)."""
    if spec is None:
        return []
    if isinstance(spec, dict):
        return [s for item in spec.values() for s in _specs(item)]
    if isinstance(spec, (list, tuple)):
        return [s for item in spec for s in _specs(item)]
    return [spec]
