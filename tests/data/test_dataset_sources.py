"""The tf.data additions: cache, skip, zip, from_generator, unbatch, concatenate, element_spec, options."""

import numpy as np
import pytest

from ipu_teach.data import Dataset
from ipu_teach.data.dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from ipu_teach.data.options import Options
from ipu_teach.data.tensor_spec import TensorSpec
from ipu_teach.not_simulated import NotSimulatedError


def _values(dataset):
    return [int(v) for v in dataset]


def test_cache_freezes_the_first_complete_pass_of_a_shuffle():
    shuffled = Dataset.range(8).shuffle(8, seed=2)
    cached = shuffled.cache()
    first = _values(cached)
    assert _values(cached) == first and _values(cached.repeat(2)) == first * 2
    assert _values(shuffled) != _values(shuffled)  # without the cache every pass reshuffles


def test_a_pass_cut_short_is_not_cached():
    seen = []
    cached = Dataset.range(4).map(lambda v: seen.append(int(v)) or v).cache()
    assert _values(cached.take(2)) == [0, 1]
    assert _values(cached) == [0, 1, 2, 3] and seen == [0, 1, 0, 1, 2, 3]
    assert _values(cached) == [0, 1, 2, 3] and len(seen) == 6


def test_skip_and_take_and_their_cardinality():
    assert _values(Dataset.range(5).skip(3)) == [3, 4] and Dataset.range(5).skip(3).cardinality() == 2
    assert Dataset.range(5).skip(9).cardinality() == 0 and _values(Dataset.range(5).skip(-1)) == []
    assert Dataset.range(5).repeat().skip(2).cardinality() == INFINITE_CARDINALITY


def test_zip_ends_with_the_shortest_and_keeps_the_structure():
    zipped = Dataset.zip({"a": Dataset.range(3), "b": Dataset.range(10, 15)})
    assert [(int(e["a"]), int(e["b"])) for e in zipped] == [(0, 10), (1, 11), (2, 12)]
    assert zipped.cardinality() == 3
    assert Dataset.zip((Dataset.range(3), Dataset.range(2).repeat())).cardinality() == 3
    assert (
        Dataset.zip((Dataset.range(3), Dataset.range(3).filter(lambda v: v > 0))).cardinality() == UNKNOWN_CARDINALITY
    )
    with pytest.raises(TypeError, match="tuple or dict of Datasets"):
        Dataset.zip((Dataset.range(3), [1, 2]))


def test_from_generator_converts_to_the_signature_and_restarts_each_pass():
    def batches():
        yield [[1.5, 2.5]], [3]
        yield [[0.5, 1.0]], [1]

    dataset = Dataset.from_generator(
        batches, output_signature=(TensorSpec((1, 2), "float32"), TensorSpec((1,), "int32"))
    )
    first = list(dataset)
    assert first[0][0].dtype == np.float32 and first[0][1].dtype == np.int32 and len(list(dataset)) == 2
    assert dataset.cardinality() == UNKNOWN_CARDINALITY and dataset.batch_size == 1 and dataset.drop_remainder


def test_from_generator_reports_tensorflows_errors():
    wrong_shape = Dataset.from_generator(lambda: iter([np.zeros(3)]), output_signature=TensorSpec((2,), "float32"))
    with pytest.raises(ValueError, match=r"yielded an element of shape \(3,\) where an element of shape \(2,\)"):
        list(wrong_shape)
    wrong_structure = Dataset.from_generator(lambda: iter([(1, 2)]), output_signature=TensorSpec((), "int32"))
    with pytest.raises(TypeError, match="did not match the expected structure"):
        list(wrong_structure)
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(lambda: iter([]))
    legacy = Dataset.from_generator(
        lambda: iter([(np.ones((2, 3)), 1)]), output_types=("float32", "int64"), output_shapes=((None, 3), ())
    )
    assert legacy.element_spec == (TensorSpec((None, 3), "float32"), TensorSpec((), "int64"))


def test_unbatch_and_concatenate():
    batched = Dataset.from_tensor_slices(np.arange(10)).batch(4)
    assert _values(batched.unbatch()) == list(range(10))
    assert _values(Dataset.range(2).concatenate(Dataset.range(5, 7))) == [0, 1, 5, 6]
    assert Dataset.range(2).concatenate(Dataset.range(3)).cardinality() == 5


def test_element_spec_follows_batch_map_and_unbatch_without_drawing_data():
    draws = []
    x = np.zeros((10, 4), np.float32)
    dataset = Dataset.from_tensor_slices((x, np.arange(10))).shuffle(10, seed=0)
    assert dataset.element_spec == (TensorSpec((4,), "float32"), TensorSpec((), "int64"))
    batched = dataset.batch(3)
    assert batched.element_spec[0].shape == (None, 4)
    assert dataset.batch(3, drop_remainder=True).element_spec[0].shape == (3, 4)
    mapped = batched.map(lambda a, b: draws.append(1) or (a.reshape(-1, 2, 2), np.eye(5)[b]))
    assert mapped.element_spec == (TensorSpec((None, 2, 2), "float32"), TensorSpec((None, 5), "float64"))
    assert mapped.unbatch().element_spec[1].shape == (5,)
    order = [int(b) for _, b in dataset]
    assert [int(b) for _, b in Dataset.from_tensor_slices((x, np.arange(10))).shuffle(10, seed=0)] == order


def test_options_are_recorded_merged_and_checked():
    options = Options()
    options.experimental_distribute.auto_shard_policy = 1
    more = Options()
    more.threading.private_threadpool_size = 4
    dataset = Dataset.range(3).with_options(options).with_options(more)
    assert dataset.options().experimental_distribute.auto_shard_policy == 1
    assert dataset.options().experimental_threading.private_threadpool_size == 4 and _values(dataset) == [0, 1, 2]
    with pytest.raises(AttributeError, match="has no option 'auto_shard'"):
        options.experimental_distribute.auto_shard = 1


def test_a_tensorflow_method_ipu_teach_lacks_says_so():
    with pytest.raises(NotSimulatedError, match="^tf.data.Dataset.padded_batch is not simulated by ipu-teach"):
        Dataset.range(3).padded_batch(2)
    assert not hasattr(Dataset.range(3), "padded_batch")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_method'$"):
        Dataset.range(3).no_such_method  # noqa: B018 (the access is what raises)
