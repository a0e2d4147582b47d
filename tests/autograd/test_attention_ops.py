"""Batched matrix products and einsum, the products attention is made of: values against numpy, gradients
against central differences, costs as grouped matrix products, and clear errors for what is not supported."""

import numpy as np
import pytest
from helpers.gradcheck import check_gradients

from ipu_teach import tensorflow as tf
from ipu_teach.autograd import Tensor, ops, record
from ipu_teach.autograd.cost import MatrixProduct

ATTENTION_EQUATIONS = [
    ("abc,cd->abd", (2, 3, 4), (4, 5)),
    ("abc,cde->abde", (2, 3, 4), (4, 2, 3)),
    ("abcd,cde->abe", (2, 3, 2, 3), (2, 3, 4)),
    ("aecd,abcd->acbe", (2, 3, 2, 4), (2, 5, 2, 4)),
    ("acbe,aecd->abcd", (2, 2, 5, 3), (2, 3, 2, 4)),
]


def test_batch_matmul_values_and_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(2, 3, 5, 2))
    np.testing.assert_allclose(ops.BatchMatMulOp.apply(Tensor(a), Tensor(b)).data, a @ b, rtol=1e-12)
    check_gradients(ops.BatchMatMulOp.apply, [a[0], b[0]], seed=1)


def test_batch_matmul_costs_one_grouped_product_and_its_two_gradients():
    groups, m, k, n = 6, 4, 5, 2
    a = Tensor(np.ones((2, 3, m, k), np.float32), requires_grad=True)
    b = Tensor(np.ones((2, 3, k, n), np.float32), requires_grad=True)
    with record() as tape:
        ops.BatchMatMulOp.apply(a, b)
    (rec,) = tape
    assert rec.forward.products == (MatrixProduct(groups * m, k, n, k),)
    assert rec.forward.flops == 2 * groups * m * k * n and rec.forward.vector_flops == 0
    assert rec.backward.products == (  # grad @ b^T and a^T @ grad
        MatrixProduct(groups * m, n, k, n, right_transposed=True),
        MatrixProduct(groups * k, m, n, m, left_transposed=True),
    )


def test_batch_matmul_refuses_mismatched_batches():
    with pytest.raises(ValueError, match=r"cannot multiply shapes \(2, 3, 4\) and \(3, 4, 5\): both need the same"):
        ops.BatchMatMulOp.apply(np.ones((2, 3, 4)), np.ones((3, 4, 5)))


@pytest.mark.parametrize("equation, a_shape, b_shape", ATTENTION_EQUATIONS, ids=[e[0] for e in ATTENTION_EQUATIONS])
def test_einsum_matches_numpy_and_differentiates(equation, a_shape, b_shape):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=a_shape), rng.normal(size=b_shape)
    out = ops.einsum(equation, Tensor(a), Tensor(b))
    np.testing.assert_allclose(out.data, np.einsum(equation, a, b), rtol=1e-12, atol=1e-12)
    check_gradients(lambda x, y: ops.einsum(equation, x, y), [a, b], seed=2)


def test_einsum_of_a_projection_is_one_dense_product_and_of_attention_a_grouped_one():
    with record() as tape:
        ops.einsum("abc,cde->abde", np.ones((2, 3, 4), np.float32), np.ones((4, 2, 3), np.float32))
    assert [r.op for r in tape] == ["Reshape", "MatMul", "Reshape"]  # the kernel to (4, 6), the result back
    # both operands are the step's data (the kernel through a reshape, a view): laid out for the product
    assert tape[1].forward.products == (MatrixProduct(6, 4, 6, 4, left_laid_out=True, right_laid_out=True),)
    with record() as tape:  # keys (batch 2, 3 positions, 2 heads, 4 channels), queries at 5 positions
        ops.einsum("aecd,abcd->acbe", np.ones((2, 3, 2, 4), np.float32), np.ones((2, 5, 2, 4), np.float32))
    products = [p for r in tape for p in r.forward.products]
    assert products == [MatrixProduct(2 * 2 * 5, 4, 3, 4)]


@pytest.mark.parametrize(
    "equation, problem",
    [
        ("abc,cd", "it needs two operands and an explicit output"),
        ("ab,bc,cd->ad", "it needs two operands and an explicit output"),
        ("...c,cd->...d", "indices must be letters"),
        ("aab,bc->ac", "an index repeats within one operand"),
        ("ab,bc->az", "an output index appears in neither operand"),
        ("abc,cd->ad", "an index is summed within one operand only"),
    ],
)
def test_einsum_names_the_supported_equations_for_others(equation, problem):
    with pytest.raises(ValueError, match="not supported: " + problem) as caught:
        ops.einsum(equation, np.ones((2, 2, 2)), np.ones((2, 2)))
    assert '"aecd,abcd->acbe", "acbe,aecd->abcd"' in str(caught.value)


def test_einsum_refuses_unequal_sizes_of_a_shared_index():
    with pytest.raises(ValueError, match="index 'c' of 'abc,cd->abd' has size 4 in the first operand and 3"):
        ops.einsum("abc,cd->abd", np.ones((2, 3, 4)), np.ones((3, 5)))


def test_tf_matmul_and_einsum_differentiate_batched_products():
    rng = np.random.default_rng(4)
    q, k = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(2, 4, 5)).astype(np.float32)
    query = tf.Variable(q)
    with tf.GradientTape() as tape:
        scores = tf.matmul(query, k)
        total = tf.reduce_sum(tf.einsum("abc,abc->ab", scores, scores))
    np.testing.assert_allclose(np.asarray(scores), q @ k, rtol=1e-6)
    (grad,) = tape.gradient(total, [query])
    np.testing.assert_allclose(np.asarray(grad), 2 * (q @ k) @ np.swapaxes(k, 1, 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tf.einsum("ij,jk->ik", q[0], k[0])), q[0] @ k[0], rtol=1e-6)
