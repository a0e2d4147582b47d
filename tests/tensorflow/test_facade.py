"""The tf facade: dtypes, array and math functions, random seeds and device queries behave as TensorFlow's."""

import inspect

import numpy as np
import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu
from ipu_teach.autograd import Tensor
from ipu_teach.not_simulated import NotSimulatedError


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
    assert tf.function(len)([1, 2]) == 2 and tf.function(len).python_function is len and double.jit_compile


def test_ipu_utils_and_strategy_names():
    ipu.utils.move_variable_initialization_to_cpu()
    strategy = ipu.ipu_strategy.IPUStrategy()
    with pytest.raises(AttributeError, match="IPUStrategy.extended is not simulated by ipu-teach"):
        strategy.extended  # noqa: B018 (the attribute lookup is what fails)


def _facade_functions() -> dict:
    """Every function of the ``tf`` facade (top level, ``tf.math``, ``tf.random``), by its name there."""
    found = {}
    for prefix, module in (("", tf), ("math.", tf.math), ("random.", tf.random)):
        for name, value in vars(module).items():
            if (
                not name.startswith("_")
                and inspect.isfunction(value)
                and value.__module__.startswith("ipu_teach.tensorflow.")
                and value.__module__ != "ipu_teach.tensorflow.tensor"
            ):
                found.setdefault(value, prefix + name)
    return {name: function for function, name in found.items()}


_A = np.array([[0.5, 1.5, 2.0], [3.0, 0.25, 1.0]], np.float32)
_B = np.array([[1.0, 2.0, 0.5], [0.5, 4.0, 1.0]], np.float32)
_MASK = np.array([[True, False, True], [False, True, True]])
_SHAPE = np.array([2, 3])
_BINARY = {"add", "subtract", "multiply", "divide", "truediv", "pow", "maximum", "minimum", "equal", "not_equal"}
_BINARY |= {"greater", "less", "math.floordiv", "math.mod", "math.greater_equal", "math.less_equal"}
_TAKES_NO_TENSOR = {"function", "random.set_seed", "device", "cond", "while_loop", "control_dependencies", "no_op"}
_TAKES_NO_TENSOR |= {"print", "is_tensor"}
_CALLS = {
    "matmul": lambda T: tf.matmul(T(_A), T(_B.T)),
    "clip_by_norm": lambda T: tf.clip_by_norm(T(_A), 1.0),
    "clip_by_global_norm": lambda T: tf.clip_by_global_norm([T(_A), T(_B)], 1.0)[0][1],
    "cast": lambda T: tf.cast(T(_A), tf.int32),
    "clip_by_value": lambda T: tf.clip_by_value(T(_A), T(np.float32(0.6)), 1.5),
    "concat": lambda T: tf.concat([T(_A), T(_B)], axis=0),
    "constant": lambda T: tf.constant(T(_A)),
    "convert_to_tensor": lambda T: tf.convert_to_tensor(T(np.arange(3))),  # keeps int64, as arrays
    "expand_dims": lambda T: tf.expand_dims(T(_A), -1),
    "fill": lambda T: tf.fill(T(_SHAPE), 2.0),
    "gather": lambda T: tf.gather(T(_A), T(np.array([1, 0, 1])), axis=0),
    "identity": lambda T: tf.identity(T(_A)),
    "one_hot": lambda T: tf.one_hot(T(np.array([0, 2, 1])), 3),
    "ones": lambda T: tf.ones(T(_SHAPE)),
    "ones_like": lambda T: tf.ones_like(T(_A)),
    "range": lambda T: tf.range(T(np.array(5))),
    "rank": lambda T: tf.rank(T(_A)),
    "reshape": lambda T: tf.reshape(T(_A), T(np.array([3, 2]))),
    "shape": lambda T: tf.shape(T(_A)),
    "size": lambda T: tf.size(T(_A)),
    "squeeze": lambda T: tf.squeeze(T(_A[:1])),
    "stack": lambda T: tf.stack([T(_A), T(_B)], axis=1),
    "transpose": lambda T: tf.transpose(T(_A)),
    "einsum": lambda T: tf.einsum("ij,kj->ik", T(_A), T(_B)),
    "where": lambda T: tf.where(T(_MASK), T(_A), T(_B)),
    "zeros": lambda T: tf.zeros(T(_SHAPE)),
    "zeros_like": lambda T: tf.zeros_like(T(_A)),
    "argmax": lambda T: tf.argmax(T(_A), axis=-1),
    "argmin": lambda T: tf.argmin(T(_A), axis=-1),
    "math.logical_and": lambda T: tf.math.logical_and(T(_MASK), T(~_MASK[::-1])),
    "math.logical_or": lambda T: tf.math.logical_or(T(_MASK), T(~_MASK[::-1])),
    "math.logical_not": lambda T: tf.math.logical_not(T(_MASK)),
    "reduce_any": lambda T: tf.reduce_any(T(_MASK), axis=0),
    "reduce_all": lambda T: tf.reduce_all(T(_MASK), axis=0),
    "random.uniform": lambda T: tf.random.uniform(T(_SHAPE), seed=1),
    "random.normal": lambda T: tf.random.normal(T(_SHAPE), seed=1),
    "random.truncated_normal": lambda T: tf.random.truncated_normal(T(_SHAPE), seed=1),
    "random.shuffle": lambda T: tf.random.shuffle(T(_A), seed=1),
}


def _call(name, function):
    if name in _CALLS:
        return _CALLS[name]
    if name in _BINARY:
        return lambda T: function(T(_A), T(_B))
    if name.startswith(("reduce_", "math.reduce_")):
        return lambda T: function(T(_A), axis=1)
    return lambda T: function(T(_A))  # elementwise functions of one tensor


def test_every_tf_function_reads_a_models_output_as_the_array_it_holds():
    """Keras models return ipu-teach Tensors; every ``tf`` function takes them as TensorFlow's take eager
    tensors (a Tensor once became a 0-d object array: ``tf.argmax(model(x), axis=-1)`` gave 0), with the values
    numpy gives."""
    functions = {name: f for name, f in _facade_functions().items() if name not in _TAKES_NO_TENSOR}
    assert len(functions) > 60  # the facade's functions were found
    for name, function in sorted(functions.items()):
        call = _call(name, function)
        tf.random.set_seed(0)
        expected = call(np.asarray)
        tf.random.set_seed(0)
        result = call(Tensor)
        if isinstance(result, Tensor):  # the differentiable ones apply the autograd's op (custom training loops),
            assert result.dtype == expected.dtype, name  # whose exp, log and tanh are ipu-teach's portable ones
            np.testing.assert_allclose(result.data, expected, rtol=1e-6, err_msg=name)
            continue
        assert isinstance(result, np.ndarray) and result.dtype == expected.dtype, name
        np.testing.assert_array_equal(result, expected, err_msg=name)


def test_numpy_and_datasets_read_a_models_output():
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])
    x = np.random.default_rng(0).normal(size=(6, 4)).astype(np.float32)
    predicted = model.predict(x, verbose=0)
    output = model(x)
    np.testing.assert_array_equal(np.argmax(output, axis=-1), predicted.argmax(axis=-1))
    np.testing.assert_array_equal(np.asarray(output), output.numpy())
    assert np.asarray(output, dtype=np.float64).dtype == np.float64
    assert len(list(tf.data.Dataset.from_tensor_slices(output))) == 6
    assert isinstance(np.ones(3, np.float32) + Tensor(np.ones(3, np.float32)), Tensor)  # still differentiable


def test_tf_experimental_numpy_joins_and_splits_arrays_and_names_what_it_lacks():
    # Graphcore's TensorBoard tutorial tiles a convolution's filters with dsplit, hstack and vstack
    filters = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    parts = tf.experimental.numpy.dsplit(filters, 4)
    assert len(parts) == 4 and parts[1].shape == (2, 3, 1) and np.array_equal(parts[1].numpy()[..., 0], filters[..., 1])
    rows = tf.experimental.numpy.hstack([tf.squeeze(p) for p in parts])
    assert rows.shape == (2, 12) and np.array_equal(tf.experimental.numpy.vstack([rows, rows]).numpy()[2:], rows)
    assert [p.shape for p in tf.experimental.numpy.split(filters, [1], axis=1)] == [(2, 1, 4), (2, 2, 4)]
    with pytest.raises(NotSimulatedError, match="tf.experimental.numpy.linalg is not simulated"):
        tf.experimental.numpy.linalg  # noqa: B018
    with pytest.raises(NotSimulatedError, match="tf.experimental.dlpack is not simulated"):
        tf.experimental.dlpack  # noqa: B018
    weights = tf.Variable(np.ones((2, 2), np.float32))
    with tf.GradientTape():
        with pytest.raises(ValueError, match="experimental.numpy.hstack is not differentiable in ipu-teach"):
            tf.experimental.numpy.hstack([tf.multiply(weights, 2.0), weights])
