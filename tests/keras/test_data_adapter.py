"""``get_data_adapter`` picks one adapter per kind of input, as Keras' ``select_data_adapter`` does, and each
adapter tells the executor what it knows ahead of the first epoch (steps, batch size, samples) and learns the rest."""

import doctest

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach.data import Dataset
from ipu_teach.keras.engine import data_adapter
from ipu_teach.keras.engine.data_adapter import (
    ArrayAdapter,
    DatasetAdapter,
    GeneratorAdapter,
    SequenceAdapter,
    get_data_adapter,
    split_validation,
)

X = np.arange(40, dtype=np.float32).reshape(10, 4)
Y = np.arange(10)


def _generator():
    for start in range(0, 10, 4):
        yield X[start : start + 4], Y[start : start + 4]


class _Batches(keras.utils.Sequence):
    def __len__(self):
        return 3

    def __getitem__(self, index):
        return X[index * 4 : (index + 1) * 4], Y[index * 4 : (index + 1) * 4]


@pytest.mark.parametrize(
    "make, kind, steps, batch_size, samples, python_input",
    [
        (lambda: (X, Y), ArrayAdapter, 3, 4, 10, None),
        (lambda: (Dataset.from_tensor_slices((X, Y)).batch(4), None), DatasetAdapter, 3, 4, None, None),
        (lambda: (_generator(), None), GeneratorAdapter, None, None, None, "generator"),
        (lambda: (_Batches(), None), SequenceAdapter, 3, None, None, "_Batches"),
    ],
)
def test_each_input_kind_has_its_adapter(make, kind, steps, batch_size, samples, python_input):
    x, y = make()
    adapter = get_data_adapter(x, y, batch_size=4)
    assert type(adapter) is kind
    assert (adapter.steps, adapter.batch_size, adapter.num_samples, adapter.python_input) == (
        steps,
        batch_size,
        samples,
        python_input,
    )
    first_x, first_y = adapter.first_batch()
    np.testing.assert_array_equal(first_x, X[:4])
    np.testing.assert_array_equal(first_y, Y[:4])
    batches = list(adapter.batches())
    assert [len(b[1]) for b in batches] == [4, 4, 2]
    assert adapter.steps == 3  # a generator's length is learnt from its first epoch, as Keras learns it


def test_arrays_report_a_partial_last_batch_and_datasets_do_not():
    assert get_data_adapter(X, Y, batch_size=4).partial_batch
    assert not get_data_adapter(X, Y, batch_size=5).partial_batch
    assert not get_data_adapter(Dataset.from_tensor_slices((X, Y)).batch(4)).partial_batch


def test_steps_are_checked_before_the_input_kind():
    with pytest.raises(ValueError, match="`steps_per_epoch` must be a positive integer"):
        get_data_adapter(_generator(), Y, steps=0)


def test_validation_split_takes_arrays_only():
    with pytest.raises(ValueError, match="validation_split is only supported for numpy arrays"):
        split_validation(_Batches(), None, 0.2)
    (x_train, _), (x_val, _) = split_validation(X, Y, 0.2)
    assert (len(x_train), len(x_val)) == (8, 2)


def test_get_data_adapters_example_runs():
    (example,) = doctest.DocTestFinder().find(data_adapter.get_data_adapter, globs={})
    assert doctest.DocTestRunner().run(example) == (0, len(example.examples))
