"""The Tensor and graph machinery: dtypes, broadcasting gradients, no_grad, extreme values, and the checker."""

import numpy as np
import pytest
from autograd_cases import CASE_IDS, CASES, every_op
from helpers.gradcheck import check_gradients

from ipu_teach.autograd import Function, Tensor, is_grad_enabled, no_grad, ops


def test_every_op_is_covered_by_the_shared_cases():
    functions = set(every_op())
    assert {"GELU", "MatMul", "ReLU", "Mean"} <= functions and "SavesOutput" not in functions
    covered = {case_id.split("(")[0] for case_id in CASE_IDS}
    assert functions == covered


@pytest.mark.parametrize("name, fn, inputs, wrt", CASES, ids=CASE_IDS)
def test_float32_stays_float32_through_forward_and_backward(name, fn, inputs, wrt):
    tensors = [Tensor(a, requires_grad=i in wrt) for i, a in enumerate(inputs)]
    out = fn(*tensors)
    assert out.dtype == np.float32
    out.backward(np.ones(out.shape, dtype=np.float32))
    for i in wrt:
        assert tensors[i].grad.dtype == np.float32, f"gradient of input {i}"
        assert tensors[i].grad.shape == inputs[i].shape


@pytest.mark.parametrize(
    "expression",
    [
        lambda t: t * 0.5,
        lambda t: 0.5 * t,
        lambda t: t + 1,
        lambda t: 2.0 - t,
        lambda t: t / 3.0,
        lambda t: 1.0 / (t + 2.0),
    ],
)
def test_python_numbers_do_not_promote_float32(expression):
    t = Tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    out = expression(t)
    assert out.dtype == np.float32
    out.sum().backward()
    assert t.grad.dtype == np.float32


def test_default_dtype_is_float32_and_float64_arrays_stay_float64():
    assert Tensor([1, 2]).dtype == np.float32
    assert Tensor([0.5]).dtype == np.float32
    assert Tensor(np.ones(2)).dtype == np.float64
    assert Tensor(np.array([1, 2])).dtype.kind == "i"  # integer class labels stay integers


def test_broadcast_gradients_sum_back_to_each_input_shape():
    """(3, 1, 4) + (4,) -> (3, 1, 4): b's gradient sums over the broadcast axes 0 and 1."""
    a = Tensor(np.ones((3, 1, 4), dtype=np.float32), requires_grad=True)
    b = Tensor(np.ones(4, dtype=np.float32), requires_grad=True)
    grad = np.arange(12, dtype=np.float32).reshape(3, 1, 4)
    (a * b).backward(grad)
    np.testing.assert_array_equal(a.grad, grad)
    np.testing.assert_array_equal(b.grad, grad.sum(axis=(0, 1)))


def test_broadcast_gradient_over_an_inner_axis_of_length_one():
    a = Tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    b = Tensor(np.ones((2, 1), dtype=np.float32), requires_grad=True)
    (a - b).backward(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(b.grad, [[-3], [-12]])


def test_gradients_accumulate_over_backward_calls_and_uses():
    x = Tensor(np.array([2.0, 3.0]), requires_grad=True)
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 7.0])
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [6.0, 8.0])


def test_inputs_without_requires_grad_get_no_gradient():
    x = Tensor(np.ones((2, 2)), requires_grad=True)
    w = Tensor(np.ones((2, 2)))
    (x @ w).sum().backward()
    assert w.grad is None and x.grad is not None


def test_no_grad_builds_no_graph_and_restores_the_mode():
    x = Tensor(np.ones((2, 2), dtype=np.float32), requires_grad=True)
    with no_grad():
        assert not is_grad_enabled()
        y = ops.ReLUOp.apply(x @ x) * 2.0
    assert is_grad_enabled()
    assert y.node is None and not y.requires_grad
    with pytest.raises(RuntimeError):
        with no_grad():
            raise RuntimeError("an error inside the block")
    assert is_grad_enabled()


def test_backward_without_a_gradient_needs_a_scalar():
    with pytest.raises(ValueError, match=r"needs a scalar tensor, got shape \(2,\)"):
        (Tensor(np.ones(2), requires_grad=True) * 2.0).backward()


def test_a_long_chain_backpropagates_without_recursion():
    x = Tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    y.backward()
    assert x.grad == 1.0


def test_matmul_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"cannot multiply shapes \(2, 3\) and \(4, 5\)"):
        ops.MatMulOp.apply(np.ones((2, 3)), np.ones((4, 5)))


@pytest.mark.parametrize("padding", ["full", "SAME"])
def test_unknown_padding_is_rejected(padding):
    with pytest.raises(ValueError, match="padding must be 'valid' or 'same'"):
        ops.MaxPool2DOp.apply(np.ones((1, 4, 4, 1)), padding=padding)


# ----- extreme values ----------------------------------------------------------------------------------

EXTREME = np.array([[1e4, -1e4, 0.0], [-3e4, -3e4, -3e4], [88.0, 89.0, -89.0]], dtype=np.float32)
ONE_HOT = np.eye(3, dtype=np.float32)[[1, 0, 2]]


@pytest.mark.parametrize(
    "op, labels",
    [
        (ops.SoftmaxCrossEntropyOp, ONE_HOT),
        (ops.SparseSoftmaxCrossEntropyOp, np.array([1, 0, 2])),
        (ops.SigmoidBinaryCrossentropyOp, ONE_HOT),
        (ops.SoftmaxOp, None),
        (ops.SigmoidOp, None),
        (ops.SoftplusOp, None),
    ],
)
def test_extreme_logits_give_finite_values_and_gradients(op, labels):
    x = Tensor(EXTREME, requires_grad=True)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = op.apply(x) if labels is None else op.apply(x, labels)
        out.backward(np.ones(out.shape, dtype=np.float32))
    assert np.all(np.isfinite(out.data)) and np.all(np.isfinite(x.grad))


def test_extreme_logits_give_the_exact_loss():
    """A label on a logit 2e4 below the largest costs 2e4 nats; ties cost log(3)."""
    loss = ops.SparseSoftmaxCrossEntropyOp.apply(EXTREME[:2].astype(np.float64), np.array([1, 0])).data
    np.testing.assert_allclose(loss, [2e4, np.log(3)])


@pytest.mark.parametrize("op", [ops.CategoricalCrossentropyProbsOp, ops.BinaryCrossentropyProbsOp])
def test_probability_losses_at_zero_and_one_are_finite(op):
    probs = Tensor(np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32), requires_grad=True)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = op.apply(probs, ONE_HOT[:2])
        out.backward(np.ones(out.shape, dtype=np.float32))
    assert np.all(np.isfinite(out.data)) and np.all(np.isfinite(probs.grad))
    assert out.data[0] < 1e-5 < 10 < out.data[1]  # right costs nothing; confidently wrong about -log(1e-7)


# ----- the checker itself ------------------------------------------------------------------------------


class _SquareWithWrongBackward(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return 2 * x  # forgets to multiply by the incoming gradient


class _SquareWithRightBackward(_SquareWithWrongBackward):
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved
        return 2 * x * grad


def test_gradient_checker_catches_a_backward_that_ignores_the_incoming_gradient():
    x = np.random.default_rng(0).normal(size=(3, 2))
    check_gradients(_SquareWithRightBackward.apply, [x])
    with pytest.raises(AssertionError, match="gradient of input 0"):
        check_gradients(_SquareWithWrongBackward.apply, [x])
