"""A central-difference gradient checker in float64, and value generators that keep clear of kinks.

The checker contracts the op's output with fixed random weights ``R`` (so that the scalar checked is
``sum(R * f(inputs))``, not ``sum(f(inputs))``: a backward that ignored the incoming gradient's values
would pass with all-ones weights), runs ``backward(R)`` for the analytic gradients, and compares them
with ``(L(x + eps) - L(x - eps)) / (2 eps)`` for every element of every input that takes a gradient.
"""

from __future__ import annotations

import numpy as np

from ipu_teach.autograd import Tensor

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-7


def analytic_gradients(fn, arrays, wrt, output_weights):
    """Gradients of ``sum(output_weights * fn(*inputs))`` from the autograd's backward pass."""
    tensors = [Tensor(a.copy(), requires_grad=i in wrt) for i, a in enumerate(arrays)]
    out = fn(*tensors)
    out.backward(output_weights)
    return {i: tensors[i].grad for i in wrt}


def numeric_gradient(fn, arrays, index, output_weights, eps=EPS):
    """Central differences of ``sum(output_weights * fn(*inputs))`` with respect to input ``index``."""
    arrays = [a.copy() for a in arrays]
    x = arrays[index]
    grad = np.zeros_like(x)

    def outputs():  # a copy: a reshape or slice returns a view of the input, which is changed next
        return np.array(fn(*[Tensor(a) for a in arrays]).data, copy=True)

    for idx in np.ndindex(x.shape):
        original = x[idx]
        x[idx] = original + eps
        plus = outputs()
        x[idx] = original - eps
        minus = outputs()
        x[idx] = original
        # The outputs are differenced before they are summed: summing first would cancel two large losses
        # and leave a rounding error that grows with the loss (exp of one large input swamped the tiny
        # gradient of another element).
        grad[idx] = float(np.sum((plus - minus) * output_weights)) / (2 * eps)
    return grad


def check_gradients(fn, arrays, wrt=None, seed=0):
    """Assert that backward matches central differences for the inputs ``wrt`` (default: all).

    ``fn`` takes Tensors and returns a Tensor; ``arrays`` must be float64 (integer arrays, such as
    class labels, may be passed but not listed in ``wrt``).
    """
    arrays = [np.array(a) for a in arrays]  # rng draws of shape () are Python floats
    wrt = tuple(range(len(arrays))) if wrt is None else tuple(wrt)
    for i in wrt:
        assert arrays[i].dtype == np.float64, f"input {i} must be float64 for a gradient check, got {arrays[i].dtype}"
    out_shape = fn(*[Tensor(a) for a in arrays]).shape
    output_weights = np.random.default_rng(seed).uniform(0.5, 1.5, size=out_shape)
    analytic = analytic_gradients(fn, arrays, wrt, output_weights)
    for i in wrt:
        assert analytic[i] is not None, f"input {i}: backward produced no gradient"
        assert analytic[i].shape == arrays[i].shape, (
            f"input {i}: gradient shape {analytic[i].shape} != {arrays[i].shape}"
        )
        numeric = numeric_gradient(fn, arrays, i, output_weights)
        np.testing.assert_allclose(analytic[i], numeric, rtol=RTOL, atol=ATOL, err_msg=f"gradient of input {i}")


# ----- values that keep central differences away from kinks and ties ---------------------------------


def away_from_zero(rng, shape, low=0.1, high=2.0):
    """Values with |x| in [low, high] and random sign: ReLU, Abs and friends are smooth there."""
    return rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def distinct(rng, shape, gap=0.1):
    """All-different values at least ``gap`` apart (max-pool has no ties to break)."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * gap - size * gap / 2).reshape(shape).astype(np.float64)
