"""A small ``tf.data.Dataset``: enough of its API for the workshop's input pipelines, in plain numpy.

A dataset is an immutable recipe: every method returns a new dataset, and each ``for`` loop over one
runs the recipe afresh, yielding new numpy arrays (or tuples / dicts of them) the caller may modify.
The arrays passed to ``from_tensor_slices`` are read, never written.

While a dataset is still rows of those arrays (``shuffle``, ``repeat`` and ``take`` only reorder
them), the transformations act on row indices and ``batch`` gathers each batch with one numpy
indexing per array, as fast as slicing by hand. After ``map`` or ``filter``, elements are produced
one at a time and ``batch`` stacks them.
"""
import itertools
import math

import numpy as np

from ..session import on_reset

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
AUTOTUNE = -1

# Shuffles without a seed draw one from here, so a script that never sets a seed still repeats exactly;
# keras.utils.set_random_seed re-seeds it, as TensorFlow's global seed fixes the seeds of unseeded ops.
UNSEEDED_SHUFFLES_SEED = 1234
_unseeded_shuffles = [np.random.default_rng(UNSEEDED_SHUFFLES_SEED)]
# Shuffle randomness is drawn in blocks to keep the per-element cost low.
_RANDOM_BLOCK = 1024


def seed_unseeded_shuffles(seed: int) -> None:
    """Make the seeds drawn by ``shuffle`` without ``seed=`` a function of ``seed`` (the global seed)."""
    _unseeded_shuffles[0] = np.random.default_rng(seed)


on_reset(lambda: seed_unseeded_shuffles(UNSEEDED_SHUFFLES_SEED))


class Dataset:
    """A sequence of elements (arrays, tuples or dicts of arrays) built by chaining transformations.

    ``batch_size`` and ``drop_remainder`` tell the settings of the last ``.batch`` in the chain
    (``None`` and ``False`` when unbatched), so ``fit`` and the IPU code can check batch divisibility.
    """

    def __init__(self, make_iterator, cardinality, batch_size=None, drop_remainder=False, rows_of=None):
        """Internal: use ``Dataset.from_tensor_slices`` and the transformations to build datasets.

        ``rows_of`` is ``(tensors, make_indices)`` when every element is a row of ``tensors``: then
        ``batch`` gathers its rows with one numpy indexing per array instead of stacking elements.
        """
        self._make_iterator = make_iterator
        self._cardinality = cardinality
        self._rows_of = rows_of
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset whose i-th element is row i of every array in ``tensors`` (an array, tuple or dict of arrays)."""
        structure = _as_array_structure(tensors, "tensors")
        lengths = {name: _row_count(name, array) for name, array in _named_leaves(structure, "tensors")}
        if not lengths:
            raise ValueError("Dataset.from_tensor_slices: got an empty tuple or dict; pass at least one array.")
        if len(set(lengths.values())) > 1:
            described = ", ".join(f"{name} has {count}" for name, count in lengths.items())
            raise ValueError(f"Dataset.from_tensor_slices: all arrays need the same number of rows, but {described}; "
                             "pass arrays of equal length (e.g. x and y of the same samples).")
        (count,) = set(lengths.values())
        return _rows_dataset(structure, lambda: iter(range(count)), count)

    def _derive(self, make_iterator, cardinality, **batching):
        """A new dataset downstream of this one; it keeps this one's batch settings unless told otherwise."""
        settings = {"batch_size": self.batch_size, "drop_remainder": self.drop_remainder, **batching}
        return Dataset(make_iterator, cardinality, **settings)

    def _reorder(self, transform, cardinality):
        """A dataset whose sequence is ``transform`` of this one's; ``transform`` maps an iterator factory to another.

        Shuffle, repeat and take only reorder or cut the sequence, so on a dataset of rows they act on
        the row indices and the result is still a dataset of rows.
        """
        if self._rows_of is not None:
            tensors, make_indices = self._rows_of
            return _rows_dataset(tensors, transform(make_indices), cardinality)
        return self._derive(transform(self._make_iterator), cardinality)

    def batch(self, batch_size, drop_remainder=False):
        """Stack consecutive elements into batches; a smaller last batch is kept unless ``drop_remainder``."""
        batch_size = _positive_int("batch", "batch_size", batch_size)
        drop_remainder = bool(drop_remainder)
        if self._rows_of is not None:
            tensors, make_indices = self._rows_of

            def batches():
                for chunk in _chunks(make_indices(), batch_size, drop_remainder):
                    rows = np.asarray(chunk, dtype=np.intp)
                    yield _map_structure(lambda array: array[rows], tensors)
        else:
            def batches():
                for chunk in _chunks(iter(self), batch_size, drop_remainder):
                    yield _stack(chunk)
        cardinality = self._cardinality
        if cardinality >= 0:
            cardinality = cardinality // batch_size if drop_remainder else math.ceil(cardinality / batch_size)
        return self._derive(batches, cardinality, batch_size=batch_size, drop_remainder=drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Shuffle through a buffer of ``buffer_size`` elements, as TensorFlow does (buffer >= data: full shuffle).

        The order is a function of ``seed`` (drawn from a fixed module generator when None); with
        ``reshuffle_each_iteration`` every pass over the dataset gets the next order of that sequence.
        """
        buffer_size = _positive_int("shuffle", "buffer_size", buffer_size)
        if seed is None:
            seed = int(_unseeded_shuffles[0].integers(2**63))
        elif not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise TypeError(f"Dataset.shuffle: seed must be an int >= 0 or None, got {seed!r}.")
        passes = itertools.count()

        def shuffle_sequence(make_upstream):
            def shuffled():
                pass_number = next(passes) if reshuffle_each_iteration else 0
                rng = np.random.default_rng([int(seed), pass_number])
                return _buffer_shuffle(iter(make_upstream()), buffer_size, rng)
            return shuffled
        return self._reorder(shuffle_sequence, self._cardinality)

    def repeat(self, count=None):
        """Run through the dataset ``count`` times (forever when ``count`` is None or -1)."""
        if count is None:
            count = -1
        count = _int_at_least("repeat", "count", count, -1)
        cardinality = self._cardinality
        if count == 0 or cardinality == 0:
            cardinality = 0
        elif count == -1:
            cardinality = INFINITE_CARDINALITY if cardinality != UNKNOWN_CARDINALITY else UNKNOWN_CARDINALITY
        elif cardinality >= 0:
            cardinality *= count
        return self._reorder(lambda make_upstream: lambda: _repeated(make_upstream, count), cardinality)

    def take(self, count):
        """The first ``count`` elements (all of them when ``count`` is -1)."""
        count = _int_at_least("take", "count", count, -1)
        if count == -1:
            return self._reorder(lambda make_upstream: make_upstream, self._cardinality)
        cardinality = self._cardinality
        if cardinality == INFINITE_CARDINALITY:
            cardinality = count
        elif cardinality >= 0:
            cardinality = min(cardinality, count)
        return self._reorder(lambda make_upstream: lambda: itertools.islice(iter(make_upstream()), count), cardinality)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        """Apply ``map_func`` to every element; a tuple element is passed as positional arguments, as in TensorFlow.

        ``num_parallel_calls`` and ``deterministic`` are accepted for compatibility; elements are
        mapped one after another, in order.
        """
        _check_callable("map", map_func)

        def mapped():
            for element in self:
                result = _call(map_func, element)
                # tf.data reads a list returned by the map function as a tuple of components.
                yield _as_array_structure(tuple(result) if isinstance(result, list) else result,
                                          "the map function's result")
        return self._derive(mapped, self._cardinality)

    def filter(self, predicate):
        """Keep the elements for which ``predicate`` (called like ``map``'s function) is true; count becomes unknown."""
        _check_callable("filter", predicate)

        def kept():
            for element in self:
                verdict = np.asarray(_call(predicate, element))
                if verdict.shape != () or verdict.dtype != np.bool_:
                    raise TypeError(f"Dataset.filter: the predicate must return a single bool, got {verdict!r}.")
                if verdict:
                    yield element
        cardinality = UNKNOWN_CARDINALITY if self._cardinality != 0 else 0
        return self._derive(kept, cardinality)

    def prefetch(self, buffer_size):
        """Accepted for compatibility with TensorFlow pipelines; this dataset already produces elements on demand."""
        _int_at_least("prefetch", "buffer_size", buffer_size, -1)
        return self._reorder(lambda make_upstream: make_upstream, self._cardinality)

    def cardinality(self):
        """Number of elements, or ``INFINITE_CARDINALITY`` (-1) / ``UNKNOWN_CARDINALITY`` (-2)."""
        return self._cardinality

    def __iter__(self):
        return iter(self._make_iterator())

    def __len__(self):
        if self._cardinality == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite: it has no len(); use .take(n) to bound it.")
        if self._cardinality == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown (e.g. after .filter); iterate to count its elements.")
        return self._cardinality

    def __bool__(self):
        # Without this, ``if dataset:`` would call __len__ and fail on infinite datasets.
        return True

    def __repr__(self):
        named = {INFINITE_CARDINALITY: "infinite", UNKNOWN_CARDINALITY: "unknown"}
        return (f"<Dataset cardinality={named.get(self._cardinality, self._cardinality)} "
                f"batch_size={self.batch_size} drop_remainder={self.drop_remainder}>")


def _rows_dataset(tensors, make_indices, cardinality):
    """An unbatched dataset of copies of the rows ``make_indices()`` picks from every array of ``tensors``."""
    def rows():
        for index in make_indices():
            yield _map_structure(lambda array: np.array(array[index]), tensors)
    return Dataset(rows, cardinality, rows_of=(tensors, make_indices))


def _chunks(iterator, size, drop_remainder):
    """Consecutive lists of ``size`` items; a shorter last list unless ``drop_remainder``."""
    while chunk := list(itertools.islice(iterator, size)):
        if len(chunk) < size and drop_remainder:
            return
        yield chunk


def _repeated(make_iterator, count):
    """The sequence ``count`` times over (forever when -1); stops early if a pass yields nothing, as tf.data does."""
    for _ in itertools.repeat(None) if count == -1 else range(count):
        produced = False
        for item in make_iterator():
            produced = True
            yield item
        if not produced:
            return


def _as_array_structure(value, name):
    """Tuples and dicts stay containers; everything else (lists included, as in tf.data) becomes one array."""
    if isinstance(value, tuple):
        return tuple(_as_array_structure(item, f"{name}[{index}]") for index, item in enumerate(value))
    if isinstance(value, dict):
        return {key: _as_array_structure(item, f"{name}[{key!r}]") for key, item in value.items()}
    array = np.asarray(value)
    if array.dtype == object:
        raise TypeError(f"Dataset: {name} is not a regular numeric array (got {type(value).__name__} "
                        "that numpy can only hold as objects); pass equal-shaped numbers or arrays.")
    return array


def _map_structure(fn, structure):
    """Apply ``fn`` to every array of a tuple/dict structure, keeping the structure."""
    if isinstance(structure, tuple):
        return tuple(_map_structure(fn, item) for item in structure)
    if isinstance(structure, dict):
        return {key: _map_structure(fn, item) for key, item in structure.items()}
    return fn(structure)


def _named_leaves(structure, name):
    """``(name, array)`` for every array of a structure, named like ``tensors[0]`` for error messages."""
    if isinstance(structure, tuple):
        for index, item in enumerate(structure):
            yield from _named_leaves(item, f"{name}[{index}]")
    elif isinstance(structure, dict):
        for key, item in structure.items():
            yield from _named_leaves(item, f"{name}[{key!r}]")
    else:
        yield name, structure


def _row_count(name, array):
    if array.ndim == 0:
        raise ValueError(f"Dataset.from_tensor_slices: {name} is a scalar; slicing needs arrays with at least "
                         "one dimension (wrap single values in a list).")
    return len(array)


def _stack(elements):
    """One batch from a list of elements of the same structure and shapes."""
    first = elements[0]
    if isinstance(first, tuple):
        return tuple(_stack([element[index] for element in elements]) for index in range(len(first)))
    if isinstance(first, dict):
        return {key: _stack([element[key] for element in elements]) for key in first}
    shapes = {element.shape for element in elements}
    if len(shapes) > 1:
        raise ValueError(f"Dataset.batch: elements have different shapes {sorted(shapes)}; batching needs one "
                         "shape, so .map the elements to a common shape first.")
    return np.stack(elements)


def _buffer_shuffle(elements, buffer_size, rng):
    """TensorFlow's shuffle: fill a buffer, then emit a random buffered element and put the next one in its place."""
    buffer = list(itertools.islice(elements, buffer_size))
    # Incoming elements are taken in blocks so the random slots can be drawn in one numpy call per block.
    while block := list(itertools.islice(elements, _RANDOM_BLOCK)):
        slots = (rng.random(len(block)) * len(buffer)).astype(np.int64)
        for slot, element in zip(slots.tolist(), block):
            yield buffer[slot]
            buffer[slot] = element
    for picked in rng.permutation(len(buffer)).tolist():
        yield buffer[picked]


def _call(function, element):
    """Call a user function on an element the way tf.data does: a tuple's components become positional arguments."""
    return function(*element) if isinstance(element, tuple) else function(element)


def _check_callable(method, function):
    if not callable(function):
        raise TypeError(f"Dataset.{method}: expected a function, got {function!r}.")


def _int_at_least(method, argument, value, minimum):
    """``value`` as an int, or a clear error naming the method and argument when it is not an int >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"Dataset.{method}: {argument} must be an int >= {minimum}, got {value!r}.")
    return int(value)


def _positive_int(method, argument, value):
    return _int_at_least(method, argument, value, 1)
