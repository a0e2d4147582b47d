"""A small ``tf.data.Dataset``: enough of its API for the workshop's input pipelines, in plain numpy.

A dataset is an immutable recipe: every method returns a new dataset, and each ``for`` loop over one
runs the recipe afresh, yielding new numpy arrays (or tuples / dicts of them) the caller may modify.
The arrays passed to ``from_tensor_slices`` are read, never written.

While a dataset is still rows of those arrays (``shuffle``, ``repeat`` and ``take`` only reorder
them), the transformations act on row indices and ``batch`` gathers each batch with one numpy
indexing per array, as fast as slicing by hand. After ``map`` or ``filter``, elements are produced
one at a time and ``batch`` stacks them.

``element_spec`` is worked out only when asked for (after ``map``, by calling the function once on
zeros of the upstream shapes, as TensorFlow traces it), so it never draws from a shuffle or a generator.
"""

import itertools
import math

import numpy as np

from ..not_simulated import NotSimulatedError
from ..session import on_reset
from . import generator as generator_module
from . import ordering
from .options import Options
from .structure import as_array_structure, map_structure, named_leaves, stack
from .tensor_spec import TensorSpec, traced_spec

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
AUTOTUNE = -1

# Shuffles without a seed draw one from here, so a script that never sets a seed still repeats exactly;
# keras.utils.set_random_seed re-seeds it, as TensorFlow's global seed fixes the seeds of unseeded ops.
UNSEEDED_SHUFFLES_SEED = 1234
_unseeded_shuffles = [np.random.default_rng(UNSEEDED_SHUFFLES_SEED)]


def seed_unseeded_shuffles(seed: int) -> None:
    """Make the seeds drawn by ``shuffle`` without ``seed=`` a function of ``seed`` (the global seed)."""
    _unseeded_shuffles[0] = np.random.default_rng(seed)


on_reset(lambda: seed_unseeded_shuffles(UNSEEDED_SHUFFLES_SEED))


class Dataset:
    """A sequence of elements (arrays, tuples or dicts of arrays) built by chaining transformations.

    ``batch_size`` and ``drop_remainder`` tell the settings of the last ``.batch`` in the chain
    (``None`` and ``False`` when unbatched), so ``fit`` and the IPU code can check batch divisibility.

    Example:

    >>> from ipu_teach.data import Dataset
    >>> batches = Dataset.from_tensor_slices(np.arange(5)).batch(2, drop_remainder=True)
    >>> [batch.tolist() for batch in batches], batches.batch_size, batches.drop_remainder
    ([[0, 1], [2, 3]], 2, True)
    """

    def __init__(
        self, make_iterator, cardinality, batch_size=None, drop_remainder=False, rows_of=None, spec=None, options=None
    ):
        """Internal: use ``Dataset.from_tensor_slices`` and the transformations to build datasets.

        ``rows_of`` is ``(tensors, make_indices)`` when every element is a row of ``tensors``: then
        ``batch`` gathers its rows with one numpy indexing per array instead of stacking elements.
        ``spec`` is a function returning the element_spec.
        """
        self._make_iterator = make_iterator
        self._cardinality = cardinality
        self._rows_of = rows_of
        self._spec = spec
        self._options = options if options is not None else Options()
        self.batch_size = batch_size
        self.drop_remainder = drop_remainder

    @staticmethod
    def from_tensor_slices(tensors):
        """A dataset whose i-th element is row i of every array in ``tensors`` (an array, tuple or dict of arrays).

        Example:

        >>> from ipu_teach.data import Dataset
        >>> images, labels = np.zeros((3, 2), np.float32), np.array([7, 8, 9])
        >>> [(x.shape, int(y)) for x, y in Dataset.from_tensor_slices((images, labels))]
        [((2,), 7), ((2,), 8), ((2,), 9)]
        """
        structure = as_array_structure(tensors, "tensors")
        lengths = {name: _row_count(name, array) for name, array in named_leaves(structure, "tensors")}
        if not lengths:
            raise ValueError("Dataset.from_tensor_slices: got an empty tuple or dict; pass at least one array.")
        if len(set(lengths.values())) > 1:
            described = ", ".join(f"{name} has {count}" for name, count in lengths.items())
            raise ValueError(
                f"Dataset.from_tensor_slices: all arrays need the same number of rows, but {described}; "
                "pass arrays of equal length (e.g. x and y of the same samples)."
            )
        (count,) = set(lengths.values())
        return _rows_dataset(structure, lambda: iter(range(count)), count)

    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element: ``tensors`` itself."""
        return Dataset.from_tensor_slices(
            map_structure(lambda array: array[np.newaxis], as_array_structure(tensors, "tensors"))
        )

    @staticmethod
    def range(*args, dtype="int64"):
        """``Dataset.range(stop)`` / ``(start, stop[, step])``: the numbers of Python's ``range``. A step of 0
        is refused with TensorFlow's message (its RangeDatasetOp's InvalidArgumentError)."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to RangeDataset: {args}: give stop, or start, stop[, step]")
        if len(args) == 3 and args[2] == 0:
            raise ValueError(f"Dataset.range{args}: step must be a non-zero integer.")
        return Dataset.from_tensor_slices(np.arange(*args, dtype=np.dtype(dtype)))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        """Elements yielded by ``generator(*args)`` (called afresh for every pass), checked against
        ``output_signature`` (a structure of ``tf.TensorSpec``) and converted to its dtypes.

        When every component has a fully known shape with the same first dimension, each element is
        a batch of that fixed size, which the IPU accepts as a batched dataset.
        """
        _check_callable("from_generator", generator)
        signature = generator_module.signature(output_signature, output_types, output_shapes)
        call_args = tuple(args or ())

        def generated():
            for element in generator(*call_args):
                yield generator_module.checked(element, signature)

        batch_size = generator_module.fixed_batch_size(signature)
        return Dataset(
            generated,
            UNKNOWN_CARDINALITY,
            batch_size=batch_size,
            drop_remainder=batch_size is not None,
            spec=lambda: signature,
        )

    @staticmethod
    def zip(datasets):
        """Elements of several datasets side by side, in the structure (tuple or dict) of ``datasets``; ends
        with the shortest."""
        leaves = [dataset for _, dataset in named_leaves(datasets, "datasets")]
        if not leaves or not all(isinstance(dataset, Dataset) for dataset in leaves):
            raise TypeError(f"Dataset.zip: expected a tuple or dict of Datasets, got {datasets!r}")
        counts = [dataset.cardinality() for dataset in leaves]
        finite = [count for count in counts if count >= 0]
        cardinality = (
            UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else (min(finite) if finite else INFINITE_CARDINALITY)
        )
        sizes = {(dataset.batch_size, dataset.drop_remainder) for dataset in leaves}
        batch_size, drop_remainder = sizes.pop() if len(sizes) == 1 else (None, False)

        def zipped():
            iterators = map_structure(iter, datasets)
            while True:
                element = map_structure(lambda iterator: next(iterator, _ENDED), iterators)
                if any(leaf is _ENDED for _, leaf in named_leaves(element, "element")):
                    return
                yield element

        return Dataset(
            zipped,
            cardinality,
            batch_size,
            drop_remainder,
            spec=lambda: map_structure(lambda dataset: dataset.element_spec, datasets),
        )

    def _derive(self, make_iterator, cardinality, **settings):
        """A new dataset downstream of this one; it keeps this one's batch settings, element_spec and options
        unless told otherwise."""
        settings = {
            "batch_size": self.batch_size,
            "drop_remainder": self.drop_remainder,
            "spec": self._spec,
            "options": self._options,
            **settings,
        }
        return Dataset(make_iterator, cardinality, **settings)

    def _reorder(self, transform, cardinality):
        """A dataset whose sequence is ``transform`` of this one's; ``transform`` maps an iterator factory to another.

        Shuffle, repeat and take only reorder or cut the sequence, so on a dataset of rows they act on
        the row indices and the result is still a dataset of rows.
        """
        if self._rows_of is not None:
            tensors, make_indices = self._rows_of
            return _rows_dataset(tensors, transform(make_indices), cardinality, self._options)
        return self._derive(transform(self._make_iterator), cardinality)

    def batch(self, batch_size, drop_remainder=False):
        """Stack consecutive elements into batches; a smaller last batch is kept unless ``drop_remainder``."""
        batch_size = _positive_int("batch", "batch_size", batch_size)
        drop_remainder = bool(drop_remainder)
        if self._rows_of is not None:
            tensors, make_indices = self._rows_of

            def batches():
                for chunk in ordering.chunks(make_indices(), batch_size, drop_remainder):
                    rows = np.asarray(chunk, dtype=np.intp)
                    yield map_structure(lambda array: array[rows], tensors)  # noqa: B023 (called at once)
        else:

            def batches():
                for chunk in ordering.chunks(iter(self), batch_size, drop_remainder):
                    yield stack(chunk)

        cardinality = self._cardinality
        if cardinality >= 0:
            cardinality = cardinality // batch_size if drop_remainder else math.ceil(cardinality / batch_size)
        leading = batch_size if drop_remainder else None
        return self._derive(
            batches,
            cardinality,
            batch_size=batch_size,
            drop_remainder=drop_remainder,
            spec=lambda: map_structure(
                lambda spec: TensorSpec(None if spec.shape is None else (leading,) + spec.shape, spec.dtype),
                self.element_spec,
            ),
        )

    def unbatch(self):
        """Split every element along its first axis into that many elements."""

        def rows():
            for element in self:
                leaves = [array for _, array in named_leaves(element, "element")]
                for index in range(len(leaves[0]) if leaves and leaves[0].ndim else 0):
                    yield map_structure(lambda array: array[index], element)  # noqa: B023 (called at once)

        return Dataset(
            rows,
            UNKNOWN_CARDINALITY if self._cardinality != INFINITE_CARDINALITY else self._cardinality,
            spec=lambda: map_structure(
                lambda spec: TensorSpec(None if spec.shape is None else spec.shape[1:], spec.dtype), self.element_spec
            ),
            options=self._options,
        )

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
                return ordering.buffer_shuffle(iter(make_upstream()), buffer_size, rng)

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
        return self._reorder(lambda make_upstream: lambda: ordering.repeated(make_upstream, count), cardinality)

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

    def skip(self, count):
        """All but the first ``count`` elements (none when ``count`` is -1)."""
        count = _int_at_least("skip", "count", count, -1)
        cardinality = self._cardinality
        if count == -1:
            cardinality = 0
        elif cardinality >= 0:
            cardinality = max(0, cardinality - count)
        stop = 0 if count == -1 else None
        return self._reorder(
            lambda make_upstream: lambda: itertools.islice(iter(make_upstream()), max(count, 0), stop), cardinality
        )

    def cache(self, filename=""):
        """Keep the elements of the first complete pass and replay them on every later pass (a shuffle before
        the cache is then frozen, as in TensorFlow). ``filename`` is accepted; the cache stays in memory."""
        if not isinstance(filename, str):
            raise TypeError(f"Dataset.cache: filename must be a string, got {filename!r}")
        kept = []

        def cached():
            if kept:
                yield from kept[0]
                return
            recorded = []
            for element in self:
                recorded.append(element)
                yield element
            kept.append(recorded)  # only a complete pass is kept; a pass cut short starts over next time

        return self._derive(cached, self._cardinality)

    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"Dataset.concatenate: expected a Dataset, got {dataset!r}")
        counts = (self._cardinality, dataset.cardinality())
        cardinality = (
            UNKNOWN_CARDINALITY
            if UNKNOWN_CARDINALITY in counts
            else INFINITE_CARDINALITY
            if INFINITE_CARDINALITY in counts
            else sum(counts)
        )
        return self._derive(lambda: itertools.chain(self, dataset), cardinality)

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
                yield as_array_structure(
                    tuple(result) if isinstance(result, list) else result, "the map function's result"
                )

        return self._derive(mapped, self._cardinality, spec=lambda: traced_spec(map_func, self.element_spec, _call))

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

    @property
    def element_spec(self):
        """The structure of ``tf.TensorSpec`` of one element (``None`` where a dimension varies)."""
        return self._spec()

    def options(self):
        """The ``tf.data.Options`` set with ``with_options`` (all unset by default)."""
        return self._options

    def with_options(self, options):
        """This dataset with ``options`` merged over its own; they are recorded, the pipeline is unchanged."""
        if not isinstance(options, Options):
            raise TypeError(f"Dataset.with_options: expected a tf.data.Options, got {options!r}")
        merged = Options()
        merged.merge(self._options)
        merged.merge(options)
        return Dataset(
            self._make_iterator,
            self._cardinality,
            self.batch_size,
            self.drop_remainder,
            self._rows_of,
            self._spec,
            merged,
        )

    def as_numpy_iterator(self):
        """Iterate as numpy arrays: ipu-teach's elements already are."""
        return iter(self)

    def __iter__(self):
        return iter(self._make_iterator())

    def __getattr__(self, name):
        if name in _TF_DATASET_METHODS:
            raise NotSimulatedError(f"tensorflow.data.Dataset.{name}", dir(Dataset))
        raise AttributeError(f"'Dataset' object has no attribute {name!r}")

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
        return (
            f"<Dataset cardinality={named.get(self._cardinality, self._cardinality)} "
            f"batch_size={self.batch_size} drop_remainder={self.drop_remainder}>"
        )


_ENDED = object()  # what an exhausted iterator gives in Dataset.zip

# TensorFlow 2.6's Dataset methods that ipu-teach lacks: using one says so instead of a bare AttributeError.
_TF_DATASET_METHODS = frozenset(
    (
        "apply",
        "bucket_by_sequence_length",
        "choose_from_datasets",
        "enumerate",
        "flat_map",
        "from_sparse_tensor_slices",
        "get_single_element",
        "group_by_window",
        "interleave",
        "list_files",
        "padded_batch",
        "random",
        "reduce",
        "rejection_resample",
        "sample_from_datasets",
        "scan",
        "shard",
        "snapshot",
        "take_while",
        "unique",
        "window",
    )
)


def _rows_dataset(tensors, make_indices, cardinality, options=None):
    """An unbatched dataset of copies of the rows ``make_indices()`` picks from every array of ``tensors``."""

    def rows():
        for index in make_indices():
            yield map_structure(lambda array: np.array(array[index]), tensors)  # noqa: B023 (called at once)

    return Dataset(
        rows,
        cardinality,
        rows_of=(tensors, make_indices),
        options=options,
        spec=lambda: map_structure(lambda array: TensorSpec(array.shape[1:], array.dtype), tensors),
    )


def _row_count(name, array):
    if array.ndim == 0:
        raise ValueError(
            f"Dataset.from_tensor_slices: {name} is a scalar; slicing needs arrays with at least "
            "one dimension (wrap single values in a list)."
        )
    return len(array)


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
