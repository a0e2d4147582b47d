"""Turns what ``fit``/``evaluate``/``predict`` were given (arrays, a Dataset, a Python generator or a
``keras.utils.Sequence``) into batches.

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
    """Batches of (x, y) for one pass of ``fit``, ``evaluate`` or ``predict``."""

    def __init__(
        self,
        x,
        y=None,
        batch_size=None,
        steps=None,
        shuffle=False,
        what="fit",
        sample_weight=None,
        class_weight=None,
        passes=1,
    ):
        """``passes``: how many times arrays are gone through when ``steps`` is given (fit's epochs): Keras 2.6
        makes them one stream of that many passes, which ``steps`` cuts into epochs."""
        _check_steps(steps, what)
        self.steps_given, self.passes = steps, passes
        self.class_weight = class_weight
        self.shuffle = shuffle
        self.dataset = x if isinstance(x, Dataset) else None
        self._iterator = None
        self._peeked = None
        self.sequence = x if isinstance(x, Sequence) else None
        self.python_input = type(x).__name__ if self.sequence is not None or _is_generator(x) else None
        if self.python_input is not None:
            self._from_python(x, y, batch_size, what)
            return
        if self.dataset is not None:
            if y is not None:
                raise ValueError(f"{what}: `y` must not be given when x is a Dataset; the Dataset yields (x, y) pairs")
            # a batch_size given beside a Dataset is ignored, as Keras 2.6 does: the Dataset's batches are used
            cardinality = self.dataset.cardinality()
            if cardinality == INFINITE_CARDINALITY and steps is None:
                raise ValueError(
                    f"{what}: when passing an infinitely repeating dataset, you must specify "
                    f"the `{_steps_argument(what)}` argument"
                )
            self.batch_size = self.dataset.batch_size
            self.num_batches = cardinality if cardinality >= 0 else None
            self.num_samples = None
            return
        if x is None:
            raise ValueError(f"{what}: no input data given (x is None)")
        self.x, self.y = _as_arrays(x), (None if y is None else _as_arrays(y))
        self.sample_weight = None if sample_weight is None else np.asarray(sample_weight)
        self.num_samples = _rows(self.x)
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
        if batch_size is not None and (not isinstance(batch_size, (int, np.integer)) or batch_size < 1):
            raise ValueError(f"{what}: batch_size must be a positive integer, got {batch_size!r}")
        # Keras 2.6's TensorLikeDataAdapter: without batch_size, `steps` batches cover the data once
        self.batch_size = int(batch_size) if batch_size else (ceil_div(self.num_samples, steps) if steps else 32)
        self.num_batches = ceil_div(self.num_samples, self.batch_size)

    def _from_python(self, x, y, batch_size, what):
        """A generator or Sequence becomes a Dataset over its batches (a generator's first batch is read ahead
        for the checks, and kept)."""
        kind = "`keras.utils.Sequence`" if self.sequence is not None else "python generator"
        if y is not None:
            raise ValueError(f"{what}: `y` argument is not supported when using {kind} as input.")
        # a batch_size given is ignored, as Keras 2.6's GeneratorDataAdapter and KerasSequenceAdapter do
        self.batch_size, self.num_samples = None, None
        if self.sequence is not None:
            self.num_batches = len(self.sequence)
            self.dataset = Dataset(self._sequence_batches, self.num_batches)
            return
        iterator = iter(x)
        try:
            self._peeked = next(iterator)
        except StopIteration:
            raise ValueError(f"{what}: the generator is empty (it yielded no batch)") from None
        shared = itertools.chain([self._peeked], iterator)
        self.num_batches = None  # learnt at the end of the first epoch
        self.dataset = Dataset(lambda: shared, UNKNOWN_CARDINALITY)

    def _sequence_batches(self):
        order = backend.rng().permutation(len(self.sequence)) if self.shuffle else range(len(self.sequence))
        for index in order:
            yield self.sequence[int(index)]

    def on_epoch_end(self) -> None:
        """After every epoch of fit: a Sequence's ``on_epoch_end``, as Keras calls it."""
        if self.sequence is not None:
            self.sequence.on_epoch_end()

    @property
    def steps(self):
        """Batches per epoch, or None when only running out of data will tell."""
        return self.steps_given if self.steps_given is not None else self.num_batches

    @property
    def partial_batch(self) -> bool:
        return self.num_samples is not None and self.num_samples % self.batch_size != 0

    def first_batch(self):
        if self._peeked is not None:
            return split_element(self._peeked)
        if self.sequence is not None:  # Keras peeks at batch 0 of a Sequence
            return split_element(self.sequence[0])
        if self.dataset is not None:
            for element in self.dataset.take(1):
                return split_element(element)
            return None, None
        return self._batch(slice(0, self.batch_size))

    def batches(self):
        """The batches of one epoch (at most ``steps``); warns as Keras does when data runs out."""
        source = self._dataset_batches() if self.dataset is not None else self._array_stream()
        expected = (
            self.steps_given
            if self.steps_given is not None
            else (self.num_batches if self._peeked is not None else None)
        )
        produced = 0
        for produced, batch in enumerate(source, start=1):
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
        if self._peeked is not None and self.num_batches is None:
            self.num_batches = produced  # a generator's epoch is what its first pass gave, as Keras learns it

    ran_out = False

    def _dataset_batches(self):
        if self.steps_given is None or self.steps_given == self.dataset.cardinality() or self.sequence is not None:
            self._iterator = None
            yield from (split_element(e, self.class_weight) for e in self.dataset)
            return
        if self._iterator is None:  # steps other than the dataset's length: epochs continue one iterator, as Keras does
            self._iterator = iter(self.dataset)
        for element in self._iterator:
            yield split_element(element, self.class_weight)

    def _batch(self, index):
        if self.y is None:
            return _take(self.x, index), None
        weights = None if self.sample_weight is None else self.sample_weight[index]
        return _take(self.x, index), sample_weights.attach(_take(self.y, index), weights, self.class_weight)

    def _array_stream(self):
        """One pass over the arrays; with ``steps``, Keras 2.6's TensorLikeDataAdapter: the next ``steps`` batches
        of one stream of ``passes`` passes (each shuffled on its own), so an epoch may end inside a pass or run
        into the next, and the data runs out when the passes do."""
        if self.steps_given is None:
            yield from self._array_batches()
            return
        if self._iterator is None:
            self._iterator = itertools.chain.from_iterable(self._array_batches() for _ in range(self.passes))
        yield from self._iterator

    def _array_batches(self):
        order = backend.rng().permutation(self.num_samples) if self.shuffle else None
        for start in range(0, self.num_samples, self.batch_size):
            yield self._batch(
                slice(start, start + self.batch_size) if order is None else order[start : start + self.batch_size]
            )


def _is_generator(x) -> bool:
    """A Python generator or other one-pass iterator (not arrays, which are iterable but not iterators)."""
    return isinstance(x, types.GeneratorType) or (hasattr(x, "__next__") and hasattr(x, "__iter__"))


def split_validation(x, y, validation_split):
    """Keras' validation_split: the last fraction of the samples, taken before any shuffling."""
    if isinstance(x, (Dataset, Sequence)) or _is_generator(x):
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
