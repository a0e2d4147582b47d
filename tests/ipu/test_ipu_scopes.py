"""ipu.scopes (graphcore/tensorflow tensorflow/python/ipu/scopes.py): outside_compilation_scope runs its ops on
the host, leaving them out of the IPU program that is costed; it is refused outside an IPU program and nested."""

import numpy as np
import pytest
from ipu_test_helpers import configure

import ipu_teach.tensorflow as tf
from ipu_teach import ipu
from ipu_teach.autograd import Tensor
from ipu_teach.autograd.function import record

X = np.ones((4, 3), np.float32)


def on_the_ipu(x):
    y = tf.matmul(x, tf.ones((3, 3)))
    return tf.exp(y) + 1.0


def exp_on_the_host(x):
    y = tf.matmul(x, tf.ones((3, 3)))
    with ipu.scopes.outside_compilation_scope():
        z = tf.exp(y)
    return z + 1.0


def test_ops_in_an_outside_compilation_scope_compute_but_are_not_in_the_ipu_program():
    """The ops a program is lowered from are the recorded ones (as a custom loop records its step)."""
    with record() as tape:
        inside = on_the_ipu(Tensor(X))
    all_ops = [r.op for r in tape]
    assert "Exp" in all_ops
    with record() as tape:
        with ipu.scopes.ipu_scope("/device:IPU:0"):
            outside = exp_on_the_host(Tensor(X))
    assert [r.op for r in tape] == [op for op in all_ops if op != "Exp"]
    np.testing.assert_allclose(outside.data, inside.data)


def test_it_is_refused_outside_an_ipu_program_and_nested():
    with pytest.raises(ValueError, match="outside_compilation_scope is only allowed in XLA context"):
        with ipu.scopes.outside_compilation_scope():
            pass
    with pytest.raises(ValueError, match="Illegal nesting of outside_compilation_scope"):
        with ipu.scopes.ipu_scope("/device:IPU:0"), ipu.scopes.outside_compilation_scope():
            with ipu.scopes.outside_compilation_scope():
                pass


def test_a_function_run_by_the_strategy_may_use_it():
    configure(1)
    strategy = ipu.ipu_strategy.IPUStrategy()
    with strategy.scope():
        result = strategy.run(exp_on_the_host, args=[tf.constant(X)])
    np.testing.assert_allclose(np.asarray(result), np.exp(3.0) + 1.0, rtol=1e-6)
