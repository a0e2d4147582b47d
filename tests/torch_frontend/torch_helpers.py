"""Shared by the torch tests: gradient checks (autograd against central finite differences, in float64) and the
smallest PopTorch training model (a linear layer with its loss in ``forward``)."""

import numpy as np

from ipu_teach import torch


def numerical_gradient(function, array, eps=1e-6):
    grad = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        saved = array[index]
        array[index] = saved + eps
        up = function(array)
        array[index] = saved - eps
        down = function(array)
        array[index] = saved
        grad[index] = (up - down) / (2 * eps)
    return grad


def check_gradient(function, shape, seed=0, positive=False):
    """``function`` maps a float64 tensor to a scalar tensor; its autograd gradient equals the finite difference."""
    rng = np.random.default_rng(seed)
    array = rng.standard_normal(shape)
    if positive:
        array = np.abs(array) + 0.5
    x = torch.from_numpy(array.copy()).requires_grad_()
    function(x).backward()
    expected = numerical_gradient(lambda a: function(torch.from_numpy(a)).item(), array.copy())
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-7)


class WithLoss(torch.nn.Module):
    """A linear layer 3 -> 2 whose ``forward`` returns its output and its MSE loss, as a PopTorch training model's."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.loss = torch.nn.MSELoss()

    def forward(self, x, y):
        out = self.linear(x)
        return out, self.loss(out, y)
