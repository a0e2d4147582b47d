"""The tf.data-like Dataset: element structures, batching, shuffling, repeat/take/map/filter and cardinalities."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ipu_teach as tf
from ipu_teach.data import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

REPO = Path(__file__).resolve().parents[2]


def numbers(count=10):
    """A (features, labels) pair whose rows are easy to recognise: features[i] = [i, -i], labels[i] = 10 i."""
    features = np.stack([np.arange(count), -np.arange(count)], axis=1)
    return features, np.arange(count) * 10


def first_components(dataset):
    """The first feature of every element (or of every row of every batch), in order."""
    return np.concatenate([np.atleast_1d(np.asarray(features)[..., 0]) for features, _ in dataset]).tolist()


def as_generic(dataset):
    """The same elements through the element-by-element path (an identity map stops the row fast path)."""
    return dataset.map(lambda features, labels: (features, labels))


def test_tf_data_namespace_reaches_dataset():
    assert tf.data.Dataset is Dataset


def test_slices_of_a_tuple_are_tuples_of_rows():
    features, labels = numbers(4)
    elements = list(Dataset.from_tensor_slices((features, labels)))
    assert len(elements) == 4
    for index, (row, label) in enumerate(elements):
        np.testing.assert_array_equal(row, [index, -index])
        assert isinstance(label, np.ndarray) and label.shape == () and label == 10 * index


def test_slices_of_a_dict_and_of_a_list():
    features, labels = numbers(3)
    elements = list(Dataset.from_tensor_slices({"image": features, "label": labels}))
    assert [element["label"].item() for element in elements] == [0, 10, 20]
    np.testing.assert_array_equal(elements[2]["image"], [2, -2])
    # A list is one array, as in tf.data, not a tuple of components.
    rows = list(Dataset.from_tensor_slices([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(rows[1], [3, 4])


@pytest.mark.parametrize(
    "tensors, message",
    [
        ((np.zeros((5, 2)), np.zeros(4)), "same number of rows"),
        ({"x": np.zeros(3), "y": np.zeros(2)}, "tensors['y'] has 2"),
        (np.float32(3.0), "scalar"),
        ((), "empty"),
    ],
)
def test_bad_slices_are_clear_errors(tensors, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        Dataset.from_tensor_slices(tensors)


def test_ragged_input_is_a_clear_error():
    with pytest.raises((TypeError, ValueError), match="tensors"):
        Dataset.from_tensor_slices(np.array([[1, 2], [3]], dtype=object))


@pytest.mark.parametrize("drop_remainder, sizes", [(False, [4, 4, 2]), (True, [4, 4])])
def test_batch_with_and_without_drop_remainder(drop_remainder, sizes):
    features, labels = numbers(10)
    dataset = Dataset.from_tensor_slices((features, labels)).batch(4, drop_remainder=drop_remainder)
    batches = list(dataset)
    assert [len(batch_labels) for _, batch_labels in batches] == sizes
    assert dataset.cardinality() == len(dataset) == len(sizes)
    assert (dataset.batch_size, dataset.drop_remainder) == (4, drop_remainder)
    np.testing.assert_array_equal(batches[1][0], features[4:8])
    np.testing.assert_array_equal(batches[1][1], labels[4:8])
    assert [
        b[0].tolist()
        for b in as_generic(Dataset.from_tensor_slices((features, labels))).batch(4, drop_remainder=drop_remainder)
    ] == [b[0].tolist() for b in batches]


def test_batch_settings_follow_the_last_batch_through_later_steps():
    features, labels = numbers(12)
    unbatched = Dataset.from_tensor_slices((features, labels))
    assert (unbatched.batch_size, unbatched.drop_remainder) == (None, False)
    rebatched = unbatched.batch(2).batch(3, drop_remainder=True)
    later = rebatched.map(lambda f, label: (f, label)).repeat(2).take(3).shuffle(4, seed=0).prefetch(tf.data.AUTOTUNE)
    assert (later.batch_size, later.drop_remainder) == (3, True)
    assert next(iter(rebatched))[0].shape == (3, 2, 2)


def test_batching_a_dict_keeps_the_keys():
    features, labels = numbers(5)
    batch = next(iter(Dataset.from_tensor_slices({"x": features, "y": labels}).batch(5)))
    assert set(batch) == {"x", "y"}
    np.testing.assert_array_equal(batch["y"], labels)


def test_batching_elements_of_different_shapes_is_a_clear_error():
    ragged = Dataset.from_tensor_slices(np.arange(4)).map(lambda n: np.zeros(int(n) + 1))
    with pytest.raises(ValueError, match="different shapes"):
        list(ragged.batch(2))


def test_seeded_shuffle_is_a_permutation_that_repeats_for_the_same_seed():
    features, labels = numbers(50)
    make = lambda seed: Dataset.from_tensor_slices((features, labels)).shuffle(50, seed=seed)  # noqa: E731
    order = first_components(make(7))
    assert sorted(order) == list(range(50)) and order != list(range(50))
    assert first_components(make(7)) == order
    assert first_components(make(8)) != order
    # The element-by-element path draws the same order.
    assert first_components(as_generic(Dataset.from_tensor_slices((features, labels))).shuffle(50, seed=7)) == order


def test_reshuffle_each_iteration():
    features, labels = numbers(30)
    reshuffled = Dataset.from_tensor_slices((features, labels)).shuffle(30, seed=1)
    first, second = first_components(reshuffled), first_components(reshuffled)
    assert first != second and sorted(first) == sorted(second)
    again = Dataset.from_tensor_slices((features, labels)).shuffle(30, seed=1)
    assert [first_components(again), first_components(again)] == [first, second]
    fixed = Dataset.from_tensor_slices((features, labels)).shuffle(30, seed=1, reshuffle_each_iteration=False)
    assert first_components(fixed) == first_components(fixed)


def test_shuffle_then_repeat_gives_a_new_order_every_epoch():
    features, labels = numbers(20)
    epochs = first_components(Dataset.from_tensor_slices((features, labels)).shuffle(20, seed=3).repeat(2))
    assert sorted(epochs[:20]) == sorted(epochs[20:]) == list(range(20))
    assert epochs[:20] != epochs[20:]


@pytest.mark.parametrize("buffer_size", [1, 3])
def test_a_small_buffer_only_shuffles_locally(buffer_size):
    features, labels = numbers(40)
    order = first_components(Dataset.from_tensor_slices((features, labels)).shuffle(buffer_size, seed=0))
    assert sorted(order) == list(range(40))
    # An element can leave the buffer at the earliest buffer_size - 1 places before its own position.
    assert all(position >= element - (buffer_size - 1) for position, element in enumerate(order))
    assert (order == list(range(40))) == (buffer_size == 1)
    if buffer_size > 1:
        # Which buffered element leaves is random: other seeds move the early elements differently.
        other = first_components(Dataset.from_tensor_slices((features, labels)).shuffle(buffer_size, seed=1))
        assert other[:30] != order[:30]


def test_unseeded_shuffles_are_reproducible_across_runs():
    script = (
        "import numpy as np; from ipu_teach.data import Dataset;"
        "print([int(v) for v in Dataset.from_tensor_slices(np.arange(20)).shuffle(20)])"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": str(REPO)},
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].strip() != str(list(range(20)))


def test_repeat_take_and_cardinalities():
    features, labels = numbers(10)
    dataset = Dataset.from_tensor_slices((features, labels))
    assert dataset.cardinality() == 10
    assert first_components(dataset.repeat(2)) == list(range(10)) * 2
    assert dataset.repeat(2).cardinality() == 20
    forever = dataset.repeat()
    assert forever.cardinality() == INFINITE_CARDINALITY == dataset.repeat(-1).cardinality()
    assert first_components(forever.take(13)) == list(range(10)) + [0, 1, 2]
    assert forever.take(13).cardinality() == 13
    assert dataset.take(3).cardinality() == 3 and first_components(dataset.take(3)) == [0, 1, 2]
    assert dataset.take(100).cardinality() == 10 and dataset.take(-1).cardinality() == 10
    assert dataset.repeat(0).cardinality() == 0 and list(dataset.repeat(0)) == []
    assert forever.batch(3).cardinality() == INFINITE_CARDINALITY
    assert forever.batch(3).take(2).cardinality() == 2


def test_repeating_an_empty_dataset_ends():
    empty = Dataset.from_tensor_slices(np.zeros((0, 3)))
    assert list(empty.repeat()) == [] and empty.repeat().cardinality() == 0


def test_map_passes_tuple_components_as_arguments():
    features, labels = numbers(4)
    dataset = Dataset.from_tensor_slices((features, labels))
    summed = dataset.map(lambda row, label: row.sum() + label)
    assert [int(value) for value in summed] == [10 * i for i in range(4)]
    assert summed.cardinality() == 4
    swapped = list(dataset.map(lambda row, label: [label, row]))
    assert isinstance(swapped[1], tuple) and swapped[1][0] == 10
    as_dict = dataset.map(lambda row, label: {"x": row * 2, "y": label})
    assert [element["x"].tolist() for element in as_dict.take(2)] == [[0, 0], [2, -2]]
    assert [int(value) for value in as_dict.map(lambda element: element["y"] + 1)] == [1, 11, 21, 31]


def test_filter_makes_the_cardinality_unknown():
    features, labels = numbers(10)
    even = Dataset.from_tensor_slices((features, labels)).filter(lambda row, label: label % 20 == 0)
    assert first_components(even) == [0, 2, 4, 6, 8]
    assert even.cardinality() == UNKNOWN_CARDINALITY
    assert even.repeat().cardinality() == UNKNOWN_CARDINALITY and even.batch(2).cardinality() == UNKNOWN_CARDINALITY
    assert even.take(2).cardinality() == UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="unknown"):
        len(even)
    with pytest.raises(TypeError, match="single bool"):
        list(Dataset.from_tensor_slices(features).filter(lambda row: row))


def test_len_of_an_infinite_dataset_is_a_type_error_but_it_is_truthy():
    forever = Dataset.from_tensor_slices(np.arange(3)).repeat()
    with pytest.raises(TypeError, match="infinite"):
        len(forever)
    assert forever
    assert "cardinality=infinite" in repr(forever)


@pytest.mark.parametrize(
    "build, error, message",
    [
        (lambda d: d.batch(0), ValueError, "batch_size"),
        (lambda d: d.batch("4"), ValueError, "batch_size"),
        (lambda d: d.batch(True), ValueError, "batch_size"),
        (lambda d: d.shuffle(0), ValueError, "buffer_size"),
        (lambda d: d.shuffle(4, seed="x"), TypeError, "seed"),
        (lambda d: d.shuffle(4, seed=-1), TypeError, "seed"),
        (lambda d: d.repeat(-2), ValueError, "count"),
        (lambda d: d.take(1.5), ValueError, "count"),
        (lambda d: d.map("not a function"), TypeError, "map"),
    ],
)
def test_bad_arguments_are_clear_errors(build, error, message):
    with pytest.raises(error, match=message):
        build(Dataset.from_tensor_slices(np.arange(5)))


def test_datasets_are_immutable_and_inputs_untouched():
    features, labels = numbers(6)
    kept = (features.copy(), labels.copy())
    dataset = Dataset.from_tensor_slices((features, labels))
    batched = dataset.batch(2)
    assert batched is not dataset and dataset.batch_size is None and dataset.cardinality() == 6
    for batch_features, batch_labels in batched:
        batch_features += 100
        batch_labels[:] = -1
    for row, _label in as_generic(dataset.shuffle(6, seed=0)).batch(3):
        row *= 0
    for row, _label in dataset:
        row += 1
    np.testing.assert_array_equal(features, kept[0])
    np.testing.assert_array_equal(labels, kept[1])
    assert first_components(batched) == list(range(6))


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 10, 0), r"Dataset.range\(0, 10, 0\): step must be a non-zero integer\.$"),  # was ZeroDivisionError
        ((), r"Invalid arguments to RangeDataset: \(\)"),
        ((0, 10, 1, 2), r"Invalid arguments to RangeDataset: \(0, 10, 1, 2\)"),
    ],
)
def test_range_refuses_a_zero_step_with_tensorflows_message(args, message):
    with pytest.raises(ValueError, match=message):
        Dataset.range(*args)
    assert list(Dataset.range(10, 0, -4)) == [10, 6, 2]
