"""Turns what ``fit``/``evaluate``/``predict`` were given (arrays, a Dataset, a Python generator or a
``keras.utils.Sequence``) into batches: one adapter class per kind of input, chosen by ``get_data_adapter``,
as Keras' ``keras/engine/data_adapter.py`` does (``TensorLikeDataAdapter``, ``DatasetAdapter``,
``GeneratorDataAdapter``, ``KerasSequenceAdapter`` and ``select_data_adapter``).

Checks happen here, before any work: x and y of different lengths, an infinite Dataset without
``steps``, ``steps`` that is not a positive number of batches. As in Keras 2.6, a ``batch_size`` given
with a Dataset, a generator or a Sequence is ignored (their own batches are used), and arrays given
``steps`` without ``batch_size`` are cut into ``steps`` batches of ``ceil(n / steps)`` samples (32 per
batch with neither); with ``steps``, fit's epochs take the next ``steps`` batches of one stream of
``epochs`` passes over the arrays.
The arrays the user passed are never modified.
A generator is read once: without ``steps`` the first epoch runs until it ends and later epochs find
it empty (Keras then warns and stops); with ``steps`` every epoch continues where the last stopped.
"""

import itertools
import types
import warnings

import numpy as np

from ...data.dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from ...integers import ceil_div
from .. import backend
from ..data_utils import Sequence
from . import sample_weights


def _rows(x):
    return len(x[0]) if isinstance(x, (list, tuple)) else len(x)


def _take(x, index):
    return [a[index] for a in x] if isinstance(x, (list, tuple)) else x[index]


def _as_arrays(x):
    if isinstance(x, (list, tuple)):
        return [np.asarray(a) for a in x]
    return np.asarray(x)


def _steps_argument(what) -> str:
    """The name of the argument that gives ``what`` (``fit``, ``fit (validation_data)``, ...) its batch count."""
    return {"fit": "steps_per_epoch", "fit (validation_data)": "validation_steps"}.get(what, "steps")


def _check_steps(steps, what) -> None:
    if steps is None or (isinstance(steps, (int, np.integer)) and not isinstance(steps, bool) and steps >= 1):
        return
    name = _steps_argument(what)
    keras_minus_one = (
        " (Keras reads -1 as 'until the data ends', which never comes with an infinite dataset: give the number "
        "of batches, or None for one pass over the data)"
        if isinstance(steps, (int, np.integer)) and steps == -1
        else ""
    )
    raise ValueError(
        f"{what}: `{name}` must be a positive integer, the number of batches, or None for all the data; "
        f"got {name}={steps!r}{keras_minus_one}"
    )


def split_element(element, class_weight=None):
    """A Dataset element is ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``."""
    if isinstance(element, list) and 1 <= len(element) <= 3:  # Keras reads a list from a generator as a tuple
        element = tuple(element)
    if isinstance(element, tuple):
        if len(element) == 1:
            return element[0], None
        weights = element[2] if len(element) > 2 else None
        return element[0], sample_weights.attach(element[1], weights, class_weight)
    return element, None


class DataAdapter:
    """Batches of (x, y) for one pass of ``fit``, ``evaluate`` or ``predict``; a subclass per kind of input.

    What the executor reads of any adapter: ``steps``, ``batch_size``, ``num_samples``, ``partial_batch``,
    ``dataset`` (None for arrays), ``python_input`` (the type's name of a generator or Sequence, else None),
    ``first_batch()`` and ``batches()``."""

    dataset = None
    python_input = None
    num_samples = None
    ran_out = False  # set when an epoch found fewer batches than it expected

    def __init__(self, *, steps=None, what="fit", shuffle=False, class_weight=None, passes=1):
        """``passes``: how many times arrays are gone through when ``steps`` is given (fit's epochs): Keras 2.6
        makes them one stream of that many passes, which ``steps`` cuts into epochs."""
        _check_steps(steps, what)
        self.what, self.steps_given, self.passes = what, steps, passes
        self.shuffle, self.class_weight = shuffle, class_weight
        self._iterator = None  # the stream epochs continue when `steps` cuts it
        self.num_batches = None

    @property
    def steps(self):
        """Batches per epoch, or None when only running out of data will tell."""
        return self.steps_given if self.steps_given is not None else self.num_batches

    @property
    def partial_batch(self) -> bool:
        return self.num_samples is not None and self.num_samples % self.batch_size != 0

    def on_epoch_end(self) -> None:
        """After every epoch of fit (a Sequence's ``on_epoch_end``, as Keras calls it)."""

    def first_batch(self):
        raise NotImplementedError

    def _epoch_batches(self):
        """The batches one epoch may draw from (``batches`` stops after ``steps``)."""
        raise NotImplementedError

    def _expected_batches(self):
        """How many batches an epoch must find before running out warns, or None."""
        return self.steps_given

    def _epoch_ended(self, produced) -> None:
        """What an epoch that gave ``produced`` batches teaches (a generator's length)."""

    def batches(self):
        """The batches of one epoch (at most ``steps``); warns as Keras does when data runs out."""
        expected = self._expected_batches()
        produced = 0
        for produced, batch in enumerate(self._epoch_batches(), start=1):
            yield batch
            if self.steps_given is not None and produced >= self.steps_given:
                return
        if expected is not None and produced < expected:
            warnings.warn(
                f"Your input ran out of data; interrupting. Make sure that your dataset can generate "
                f"at least `steps` batches (in this case, {expected} batches). You may need to "
                "use the repeat() function when building your dataset.",
                stacklevel=3,
            )
            self.ran_out = True
        self._epoch_ended(produced)


class ArrayAdapter(DataAdapter):
    """numpy arrays (or a list of them, one per input), cut into batches of ``batch_size`` samples: Keras 2.6's
    ``TensorLikeDataAdapter``. Whatever is not a Dataset, a Sequence or a generator is read as arrays."""

    def __init__(self, x, y=None, batch_size=None, sample_weight=None, **options):
        super().__init__(**options)
        if x is None:
            raise ValueError(f"{self.what}: no input data given (x is None)")
        self.x, self.y = _as_arrays(x), (None if y is None else _as_arrays(y))
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.num_samples = _rows(self.x)
        self._check_cardinality()
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size < 1):
            raise ValueError(f"{self.what}: batch_size must be a positive integer, got {batch_size!r}")
        # Keras 2.6's TensorLikeDataAdapter: without batch_size, `steps` batches cover the data once
        steps = self.steps_given
        self.batch_size = int(batch_size) if batch_size else (ceil_div(self.num_samples, steps) if steps else 32)
        self.num_batches = ceil_div(self.num_samples, self.batch_size)

    def _check_cardinality(self) -> None:
        """Every array of x and y has one row per sample (Keras' message)."""
        sizes = [len(a) for a in self.x] if isinstance(self.x, list) else [len(self.x)]
        y_sizes = [] if self.y is None else [len(a) for a in self.y] if isinstance(self.y, list) else [len(self.y)]
        if len(set(sizes + y_sizes)) > 1:
            y_line = f"\n  y sizes: {', '.join(map(str, y_sizes))}" if self.y is not None else ""
            raise ValueError(
                "Data cardinality is ambiguous:\n  x sizes: "
                + ", ".join(map(str, sizes))
                + y_line
                + "\nMake sure all arrays contain the same number of samples."
            )

    def first_batch(self):
        return self._batch(slice(0, self.batch_size))

    def _batch(self, index):
        if self.y is None:
            return _take(self.x, index), None
        weights = None if self.sample_weight is None else self.sample_weight[index]
        return _take(self.x, index), sample_weights.attach(_take(self.y, index), weights, self.class_weight)

    def _epoch_batches(self):
        """One pass over the arrays; with ``steps``, Keras 2.6's TensorLikeDataAdapter: the next ``steps`` batches
        of one stream of ``passes`` passes (each shuffled on its own), so an epoch may end inside a pass or run
        into the next, and the data runs out when the passes do."""
        if self.steps_given is None:
            yield from self._one_pass()
            return
        if self._iterator is None:
            self._iterator = itertools.chain.from_iterable(self._one_pass() for _ in range(self.passes))
        yield from self._iterator

    def _one_pass(self):
        order = backend.rng().permutation(self.num_samples) if self.shuffle else None
        for start in range(0, self.num_samples, self.batch_size):
            yield self._batch(
                slice(start, start + self.batch_size) if order is None else order[start : start + self.batch_size]
            )


class DatasetAdapter(DataAdapter):
    """A ``Dataset``: its own batches (a ``batch_size`` given beside it is ignored, as Keras 2.6 does)."""

    def __init__(self, x, y=None, batch_size=None, sample_weight=None, **options):
        super().__init__(**options)
        if y is not None:
            raise ValueError(f"{self.what}: {self._y_refused}")
        if sample_weight is not None:  # a weight given beside its own batches would be silently dropped
            raise ValueError(f"{self.what}: {self._sample_weight_refused}")
        self.dataset = self._as_dataset(x)
        cardinality = self.dataset.cardinality()
        if cardinality == INFINITE_CARDINALITY and self.steps_given is None:
            raise ValueError(
                f"{self.what}: when passing an infinitely repeating dataset, you must specify "
                f"the `{_steps_argument(self.what)}` argument"
            )
        self.batch_size = self.dataset.batch_size
        self.num_batches = cardinality if cardinality >= 0 else None

    _y_refused = "`y` must not be given when x is a Dataset; the Dataset yields (x, y) pairs"
    _sample_weight_refused = (
        "`sample_weight` argument is not supported when using dataset as input; "
        "the Dataset yields (x, y, sample_weight) triples"
    )

    def _as_dataset(self, x) -> Dataset:
        return x

    def first_batch(self):
        for element in self.dataset.take(1):
            return split_element(element)
        return None, None

    def _epoch_batches(self):
        if self.steps_given is None or self.steps_given == self.dataset.cardinality():
            yield from self._one_pass()
            return
        if self._iterator is None:  # steps other than the dataset's length: epochs continue one iterator, as Keras does
            self._iterator = iter(self.dataset)
        for element in self._iterator:
            yield split_element(element, self.class_weight)

    def _one_pass(self):
        self._iterator = None
        yield from (split_element(e, self.class_weight) for e in self.dataset)


class GeneratorAdapter(DatasetAdapter):
    """A Python generator (or other one-pass iterator) as a Dataset over its batches, Keras 2.6's
    ``GeneratorDataAdapter``: its first batch is read ahead for the checks, and kept; its length is learnt at the
    end of the first epoch. Its batches have no size known ahead (``batch_size`` None)."""

    _y_refused = "`y` argument is not supported when using python generator as input."
    _sample_weight_refused = "`sample_weight` argument is not supported when using python generator as input."

    def _as_dataset(self, x) -> Dataset:
        self.python_input = type(x).__name__
        iterator = iter(x)
        try:
            self._peeked = next(iterator)
        except StopIteration:
            raise ValueError(f"{self.what}: the generator is empty (it yielded no batch)") from None
        shared = itertools.chain([self._peeked], iterator)
        return Dataset(lambda: shared, UNKNOWN_CARDINALITY)

    def first_batch(self):
        return split_element(self._peeked)

    def _expected_batches(self):
        return self.steps_given if self.steps_given is not None else self.num_batches

    def _epoch_ended(self, produced) -> None:
        if self.num_batches is None:
            self.num_batches = produced  # a generator's epoch is what its first pass gave, as Keras learns it


class SequenceAdapter(DatasetAdapter):
    """A ``keras.utils.Sequence`` as a Dataset over its batches, Keras 2.6's ``KerasSequenceAdapter``: each epoch
    from its start, in a new random order with ``shuffle``, then its ``on_epoch_end``."""

    _y_refused = "`y` argument is not supported when using `keras.utils.Sequence` as input."
    _sample_weight_refused = "`sample_weight` argument is not supported when using `keras.utils.Sequence` as input."

    def _as_dataset(self, x) -> Dataset:
        self.sequence, self.python_input = x, type(x).__name__
        return Dataset(self._sequence_batches, len(x))

    def _sequence_batches(self):
        order = backend.rng().permutation(len(self.sequence)) if self.shuffle else range(len(self.sequence))
        for index in order:
            yield self.sequence[int(index)]

    def first_batch(self):
        return split_element(self.sequence[0])  # Keras peeks at batch 0 of a Sequence

    def on_epoch_end(self) -> None:
        self.sequence.on_epoch_end()

    def _epoch_batches(self):
        return self._one_pass()


def _is_generator(x) -> bool:
    """A Python generator or other one-pass iterator (not arrays, which are iterable but not iterators)."""
    return isinstance(x, types.GeneratorType) or (hasattr(x, "__next__") and hasattr(x, "__iter__"))


def select_data_adapter(x) -> type:
    """The adapter class for ``x``: a Dataset, a Sequence, a generator, or arrays (whatever else), as Keras'
    ``select_data_adapter``."""
    if isinstance(x, Dataset):
        return DatasetAdapter
    if isinstance(x, Sequence):
        return SequenceAdapter
    if _is_generator(x):
        return GeneratorAdapter
    return ArrayAdapter


def get_data_adapter(x, y=None, batch_size=None, steps=None, **options) -> DataAdapter:
    """The adapter over ``x`` (and ``y``) for one call of ``fit``, ``evaluate`` or ``predict``. ``options``:
    ``shuffle``, ``what`` (the call, for messages), ``sample_weight``, ``class_weight``, ``passes`` (fit's
    epochs, for arrays cut by ``steps``).

    >>> import numpy as np
    >>> from ipu_teach.keras.engine.data_adapter import get_data_adapter
    >>> adapter = get_data_adapter(np.zeros((10, 2)), np.zeros(10), batch_size=4)
    >>> type(adapter).__name__, adapter.steps, adapter.partial_batch
    ('ArrayAdapter', 3, True)
    """
    return select_data_adapter(x)(x, y, batch_size=batch_size, steps=steps, **options)


def split_validation(x, y, validation_split):
    """Keras' validation_split: the last fraction of the samples, taken before any shuffling."""
    if select_data_adapter(x) is not ArrayAdapter:
        raise ValueError(
            "validation_split is only supported for numpy arrays, not Datasets; pass validation_data=... instead"
        )
    if not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be between 0 and 1, got {validation_split}")
    rows = _rows(x)
    cut = int(rows * (1 - validation_split))
    return (_take(x, slice(0, cut)), _take(y, slice(0, cut))), (_take(x, slice(cut, rows)), _take(y, slice(cut, rows)))


def unpack_validation_data(validation_data):
    if isinstance(validation_data, Dataset):
        return validation_data, None, None
    if isinstance(validation_data, (list, tuple)) and len(validation_data) in (2, 3):
        return tuple(validation_data) + (None,) * (3 - len(validation_data))
    raise ValueError("validation_data must be a tuple (x_val, y_val) or a Dataset")
