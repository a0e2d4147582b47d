"""The torch front end's tensors: PyTorch's dtypes, views, methods and autograd, gradients checked against
finite differences in float64."""

import numpy as np
import pytest
from torch_helpers import check_gradient

from ipu_teach import torch
from ipu_teach.torch.nn import functional as F


def test_dtypes_follow_pytorch_inference():
    assert torch.tensor([1.0, 2.0]).dtype == torch.float32
    assert torch.tensor([1, 2]).dtype == torch.int64
    assert torch.tensor([True]).dtype == torch.bool
    assert torch.from_numpy(np.zeros(2)).dtype == torch.float64
    assert torch.zeros(2, 3).dtype == torch.float32 and torch.zeros(2, 3).shape == torch.Size([2, 3])
    assert repr(torch.float16) == "torch.float16" and torch.ones(2).half().dtype == torch.float16
    assert (torch.ones(2, dtype=torch.float16) * 2.0).dtype == torch.float16  # a Python float keeps half
    assert torch.arange(5).dtype == torch.int64 and torch.arange(5).float().dtype == torch.float32


def test_from_numpy_shares_memory_and_numpy_refuses_grad():
    array = np.zeros(3, np.float32)
    t = torch.from_numpy(array)
    array[0] = 5
    assert t[0].item() == 5.0
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\) instead"):
        torch.ones(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="expected np.ndarray"):
        torch.from_numpy([1, 2])


def test_size_view_and_reductions():
    x = torch.arange(24).float().view(2, 3, 4)
    assert x.size() == torch.Size([2, 3, 4]) and x.size(1) == 3 and x.dim() == 3 and x.numel() == 24
    assert x.view(-1, 4).shape == (6, 4) and x.flatten(1).shape == (2, 12)
    assert x.permute(2, 0, 1).shape == (4, 2, 3) and x.transpose(0, 2).shape == (4, 3, 2)
    assert x.unsqueeze(0).shape == (1, 2, 3, 4) and x.unsqueeze(0).squeeze(0).shape == (2, 3, 4)
    assert x.sum(dim=(0, 2)).tolist() == [60.0, 92.0, 124.0]
    assert x.mean(1, keepdim=True).shape == (2, 1, 4)
    values, indices = torch.max(x, 1)
    assert values.shape == (2, 4) and indices.tolist() == [[2] * 4] * 2
    assert torch.argmax(x).item() == 23
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        torch.arange(3).mean()


def test_item_and_comparisons():
    labels, predicted = torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])
    assert torch.sum(torch.eq(predicted, labels)).item() == 2
    assert (labels == predicted).tolist() == [True, False, True]
    assert f"{torch.tensor(0.123456):.3f}" == "0.123"
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        torch.ones(2).item()


def test_no_grad_detach_and_leaves():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = w * 2
    assert not y.requires_grad and y.grad_fn is None
    z = (w * 3).detach()
    assert not z.requires_grad
    assert (w * 3).grad_fn is not None and w.is_leaf
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.add_(1)
    with torch.no_grad():
        w.add_(1)
    assert w.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.ones(1).sum().backward()


def test_gradient_accumulates_and_zero_grad():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    (w * w).sum().backward()
    assert w.grad.tolist() == [4.0, 8.0]
    w.grad = None
    assert w.grad is None


@pytest.mark.parametrize(
    "name, function, positive",
    [
        ("index", lambda x: (x[1:, [0, 2, 2]] * x[0, 1]).sum(), False),
        ("pow", lambda x: (x**3).sum(), False),
        ("sqrt", lambda x: x.sqrt().sum(), True),
        ("exp_log", lambda x: (x.exp() + x.abs().log()).sum(), False),
        ("clamp", lambda x: (x.clamp(-0.5, 0.5) * x).sum(), False),
        ("max_dim", lambda x: torch.max(x * x, 1)[0].sum(), False),
        ("softmax_dim0", lambda x: (x.softmax(0) * torch.arange(12).double().view(3, 4)).sum(), False),
        ("log_softmax", lambda x: (F.log_softmax(x, 1) * torch.arange(12).double().view(3, 4)).sum(), False),
        ("var", lambda x: x.var(1).sum(), False),
        ("cat_stack", lambda x: (torch.cat([x, x * 2], 1).sum(0) * torch.stack([x[0], x[1]]).sum()).sum(), False),
        ("where", lambda x: torch.where(x > 0, x * x, -x).sum(), False),
        ("matmul_t", lambda x: (x @ x.t()).sum(), False),
    ],
)
def test_gradients_match_finite_differences(name, function, positive):
    check_gradient(function, (3, 4), positive=positive)


def test_manual_seed_repeats_draws_and_generators_are_independent():
    torch.manual_seed(3)
    a = torch.randn(4)
    torch.manual_seed(3)
    assert torch.equal(a, torch.randn(4))
    g = torch.Generator().manual_seed(1)
    assert torch.equal(torch.rand(3, generator=g), torch.rand(3, generator=torch.Generator().manual_seed(1)))


def test_elementwise_max_and_min_of_two_tensors():
    a, b = torch.tensor([1.0, 5.0], requires_grad=True), torch.tensor([3.0, 2.0])
    assert torch.max(a, b).tolist() == [3.0, 5.0] and torch.min(a, b).tolist() == [1.0, 2.0]
    torch.max(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0]


def test_random_draws_integers_in_pytorchs_ranges():
    """``random_(to)`` draws 0 to to-1 and ``random_(from, to)`` from to to-1, as PyTorch's (the data-loading
    tutorial's labels: ``torch.empty([n], dtype=torch.long).random_(10)``); the dtype is kept."""
    torch.manual_seed(0)
    labels = torch.empty([2000], dtype=torch.long).random_(10)
    assert labels.dtype == torch.int64 and set(labels.tolist()) == set(range(10))
    floats = torch.zeros(500).random_(3, 5)
    assert floats.dtype == torch.float32 and set(floats.tolist()) == {3.0, 4.0}
    unbounded = torch.zeros(500).random_()
    assert 0 <= unbounded.min().item() and unbounded.max().item() <= 2**24 and unbounded.max().item() > 2**20
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        torch.zeros(2).random_(5, 5)


def test_count_nonzero_and_the_function_forms_of_arithmetic():
    """``torch.count_nonzero`` (the mixed-precision tutorial's accuracy) counts as PyTorch's: int64, over all
    elements, one dim or several; ``torch.sub(a, b, alpha=)`` and its siblings are the methods."""
    x = torch.tensor([[0, 1.5, 0], [2, 0, 3]])
    total = torch.count_nonzero(x)
    assert total.dtype == torch.int64 and total.ndim == 0 and total.item() == 3
    assert torch.count_nonzero(x, dim=0).tolist() == [1, 1, 1] and x.count_nonzero(1).tolist() == [1, 2]
    assert x.count_nonzero(dim=(0, 1)).item() == 3
    assert torch.sub(x, 1, alpha=2).tolist() == [[-2.0, -0.5, -2.0], [0.0, -2.0, 1.0]]
    labels, predictions = torch.tensor([1, 2, 3, 4]), torch.tensor([1, 0, 3, 0])
    assert (1 - torch.count_nonzero(torch.sub(labels, predictions)) / len(labels)).item() == 0.5
    assert torch.mul(x, 2).tolist() == (x * 2).tolist() and torch.div(x, 2).tolist() == (x / 2).tolist()
    assert torch.add(x, x, alpha=0.5).tolist() == (x * 1.5).tolist()


def test_a_list_plus_a_tensor_extends_the_list_as_in_pytorch():
    """Arithmetic with a list or tuple is not broadcast (PyTorch refuses it), so ``predictions += batch_tensor``
    (the basics tutorial's evaluation loop) extends the list with the tensor's elements."""
    predictions = []
    predictions += torch.tensor([3, 1])
    predictions += torch.tensor([4])
    assert [p.item() for p in predictions] == [3, 1, 4] and all(p.ndim == 0 for p in predictions)
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for \\+: 'Tensor' and 'list'"):
        torch.tensor([1, 2]) + [1, 2]
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for -: 'tuple' and 'Tensor'"):
        (3,) - torch.tensor([1])


def test_data_is_a_tensor_outside_the_graph_sharing_the_values_as_in_pytorch():
    """``t.data`` is PyTorch's: a tensor that requires no gradient and shares the values (the basics tutorial's
    ``model(data).data.max(dim=1).indices``, the mixed-precision one's ``.data.float()``, ``p.data.mul_(...)``);
    assigning to it replaces the values; ``copy.deepcopy`` copies them."""
    import copy

    w = torch.tensor([[1.0, 5.0], [7.0, 2.0]], requires_grad=True)
    view = w.data
    assert isinstance(view, torch.Tensor) and not view.requires_grad and view.grad_fn is None
    assert view.max(dim=1).indices.tolist() == [1, 0] and view.float().dtype == torch.float32
    view.mul_(2)  # in place through .data changes the weight, outside the graph
    assert w.tolist() == [[2.0, 10.0], [14.0, 4.0]] and w.requires_grad
    w.data = torch.zeros(2, 2)
    assert w.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    (w * 3).sum().backward()
    copied = copy.deepcopy(w)
    copied.data.add_(1)
    assert w.tolist() == [[0.0, 0.0], [0.0, 0.0]] and copied.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert copied.requires_grad and copied.grad.tolist() == w.grad.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    layer = torch.nn.Linear(2, 1)
    twin = copy.deepcopy(layer)
    assert isinstance(twin.weight, torch.nn.Parameter) and twin.weight.tolist() == layer.weight.tolist()
    twin.weight.data.fill_(0.5)
    assert layer.weight.tolist() != twin.weight.tolist()
