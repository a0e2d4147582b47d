"""tf control flow run eagerly (cond, while_loop, control_dependencies, no_op, print), gradient clipping with
TensorFlow's formulas, stop_gradient and is_tensor."""

import io
import sys

import numpy as np

import ipu_teach.tensorflow as tf


def test_cond_and_while_loop_run_the_python_functions():
    assert tf.cond(tf.constant(False), lambda: 1, lambda: 2) == 2
    assert tf.while_loop(lambda i: i < 10, lambda i: i * 2, 1) == 16
    assert tf.while_loop(lambda i, s: True, lambda i, s: [i + 1, s + i], [0, 0], maximum_iterations=3) == [3, 3]
    with tf.control_dependencies([tf.no_op()]):
        assert tf.no_op() is None


def test_print_writes_values_to_standard_error_by_default(capsys):
    tf.print("loss:", tf.constant([0.5, 1.5]), 3)
    tf.print("to stdout", output_stream=sys.stdout)
    out, err = capsys.readouterr()
    assert err == "loss: [0.5 1.5] 3\n" and out == "to stdout\n"
    stream = io.StringIO()
    tf.print(1, 2, sep=",", end="!", output_stream=stream)
    assert stream.getvalue() == "1,2!"


def test_clipping_follows_tensorflows_formulas():
    grads = [np.array([3.0, 0.0], np.float32), None, np.array([4.0], np.float32)]
    clipped, norm = tf.clip_by_global_norm(grads, 2.5)
    assert float(norm) == 5.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0], [1.5, 0.0])
    np.testing.assert_allclose(clipped[2], [2.0])
    assert clipped[0].dtype == np.float32
    unchanged, _ = tf.clip_by_global_norm(grads, 10.0)
    np.testing.assert_array_equal(unchanged[0], grads[0])
    matrix = np.array([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(tf.clip_by_norm(matrix, 1.0), matrix / np.sqrt(25.25))  # the whole tensor's norm
    np.testing.assert_allclose(
        tf.clip_by_norm(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1]), [[0.6, 0.8], [0.3, 0.4]]
    )


def test_stop_gradient_cuts_the_gradient_and_is_tensor():
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * tf.stop_gradient(v))
    np.testing.assert_array_equal(tape.gradient(loss, v), [1.0, 2.0])  # d(v * c)/dv = c
    assert tf.is_tensor(v) and tf.is_tensor(tf.constant(1.0)) and not tf.is_tensor(1.0)
