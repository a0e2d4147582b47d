"""The tf facade: dtypes, array and math functions, random seeds and device queries behave as TensorFlow's."""

import numpy as np
import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu


def test_dtypes_are_understood_by_numpy_both_ways():
    assert np.zeros(2).astype(tf.float32).dtype == np.float32
    assert np.zeros(2, dtype=np.int32).dtype == tf.int32 and tf.int32 == "int32" and tf.float16 != tf.float32
    assert tf.as_dtype(np.uint8) is tf.uint8 and tf.float32.as_numpy_dtype is np.float32
    assert tf.int32.is_integer and not tf.int32.is_floating and tf.uint8.max == 255
    with pytest.raises(TypeError, match="Cannot convert None"):
        tf.as_dtype(None)


def test_cast_truncates_toward_zero_and_constant_uses_tensorflows_python_defaults():
    np.testing.assert_array_equal(tf.cast([1.7, -1.7, 2.5], tf.int32), [1, -1, 2])
    assert tf.constant(1.5).dtype == np.float32 and tf.constant([1, 2]).dtype == np.int32
    assert tf.constant(np.arange(3)).dtype == np.int64  # arrays keep their dtype
    np.testing.assert_array_equal(tf.constant(7, shape=(2, 2)), np.full((2, 2), 7))
    with pytest.raises(TypeError, match="expected 4 values for shape"):
        tf.constant([1, 2, 3], shape=(2, 2))
    assert isinstance(tf.convert_to_tensor([1.0]).numpy(), np.ndarray)


def test_python_numbers_take_the_tensors_dtype_in_arithmetic():
    assert tf.divide(tf.cast([255], tf.float32), 255.0).dtype == np.float32
    assert tf.divide(3, 2) == 1.5


def test_one_hot_gives_off_value_rows_for_indices_out_of_range():
    np.testing.assert_array_equal(tf.one_hot([0, 2, 3, -1], 3), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert tf.one_hot([1], 2, dtype=tf.int32).dtype == np.int32


def test_shape_functions_and_reductions():
    x = tf.reshape(tf.range(6), [2, 3])
    assert tf.expand_dims(x, -1).shape == (2, 3, 1) and tf.squeeze(tf.zeros([1, 3, 1])).shape == (3,)
    np.testing.assert_array_equal(tf.reduce_sum(x, axis=1), [3, 12])
    np.testing.assert_array_equal(tf.argmax([[1, 5], [3, 2]]), [1, 0])  # TensorFlow's default axis is 0
    np.testing.assert_array_equal(tf.shape(x), [2, 3])


def test_an_operation_seed_repeats_after_set_seed_and_moves_on_between_calls():
    tf.random.set_seed(3)
    first, second = tf.random.uniform([4], seed=1), tf.random.uniform([4], seed=1)
    tf.random.set_seed(3)
    np.testing.assert_array_equal(tf.random.uniform([4], seed=1), first)
    assert not np.array_equal(first, second)


def test_set_seed_also_seeds_keras_initial_weights():
    def initial_kernel():
        return keras.Sequential([keras.layers.Dense(3, input_shape=(2,))]).get_weights()[0]

    tf.random.set_seed(9)
    kernel = initial_kernel()
    assert not np.array_equal(initial_kernel(), kernel)
    tf.random.set_seed(9)
    np.testing.assert_array_equal(initial_kernel(), kernel)


def test_random_uniform_integers_need_maxval_and_stay_in_range():
    with pytest.raises(ValueError, match="must specify maxval for integer dtype tf.int32"):
        tf.random.uniform([3], dtype=tf.int32)
    values = tf.random.uniform([1000], minval=2, maxval=5, dtype=tf.int32)
    assert values.dtype == np.int32 and set(np.unique(values)) == {2, 3, 4}
    assert np.abs(tf.random.truncated_normal([1000])).max() <= 2


def test_device_queries_answer_with_the_simulated_ipus():
    assert len(tf.config.list_physical_devices("IPU")) == 16
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.list_logical_devices("IPU") == []
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.configure_ipu_system()
    assert [d.name for d in tf.config.list_logical_devices("IPU")] == ["/device:IPU:0"]
    with pytest.raises(ValueError, match="non-GPU"):
        tf.config.experimental.set_memory_growth(tf.config.list_physical_devices("IPU")[0], True)


def test_tf_function_runs_the_python_function_eagerly():
    calls = []

    @tf.function(jit_compile=True)
    def double(x):
        calls.append(x)
        return x * 2

    assert double(2) == 4 and double(3) == 6 and calls == [2, 3]
    assert tf.function(len) is len


def test_ipu_utils_and_strategy_names():
    ipu.utils.move_variable_initialization_to_cpu()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(AttributeError, match="IPUStrategy.run is not simulated by ipu-teach"):
        strategy.run(lambda: None)
