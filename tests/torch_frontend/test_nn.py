"""nn.Module's registration and state, the layers' shapes and defaults, the functional forms' gradients (finite
differences in float64), the losses' formulas and their errors."""

import math

import numpy as np
import pytest
from torch_helpers import check_gradient

from ipu_teach import torch
from ipu_teach.torch import nn
from ipu_teach.torch.nn import functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(2 * 4 * 4, 3), nn.Linear(3, 2)])
        self.scale = nn.Parameter(torch.ones(1))
        self.register_buffer("steps", torch.zeros(1))

    def forward(self, x):
        x = self.features(x).flatten(1)
        return self.heads[1](self.heads[0](x)) * self.scale


def test_registration_names_and_state_dict():
    net = Net()
    names = [name for name, _ in net.named_parameters()]
    assert names == [
        "scale",
        "features.0.weight",
        "features.0.bias",
        "features.1.weight",
        "features.1.bias",
        "heads.0.weight",
        "heads.0.bias",
        "heads.1.weight",
        "heads.1.bias",
    ]
    state = net.state_dict()
    assert list(state)[-3:] == ["heads.0.bias", "heads.1.weight", "heads.1.bias"]
    buffers = {"steps", "features.1.running_mean", "features.1.running_var", "features.1.num_batches_tracked"}
    assert buffers <= set(state)
    assert [name for name, _ in net.named_buffers()][0] == "steps"


def test_load_state_dict_copies_in_place_and_checks_keys_and_shapes():
    a, b = Net(), Net()
    weight = b.heads[0].weight
    b.load_state_dict(a.state_dict())
    assert b.heads[0].weight is weight and torch.equal(weight, a.heads[0].weight)
    state = a.state_dict()
    del state["scale"]
    state["extra"] = torch.zeros(1)
    keys = r'Unexpected key\(s\) in state_dict: "extra".*\n.*Missing key\(s\) in state_dict: "scale"'
    with pytest.raises(RuntimeError, match=keys):
        b.load_state_dict(state)
    assert b.load_state_dict(state, strict=False) == (["scale"], ["extra"])
    bad = a.state_dict()
    bad["heads.1.bias"] = torch.zeros(5)
    before = b.heads[0].weight.detach().clone()
    with pytest.raises(RuntimeError, match=r"size mismatch for heads.1.bias: copying a param with shape \[5\]"):
        b.load_state_dict(bad)
    assert torch.equal(b.heads[0].weight, before)


def test_train_eval_zero_grad_and_assignment_errors():
    net = Net()
    assert net.eval().features[1].training is False and net.train().heads[0].training is True
    net(torch.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'scale'"):
        net.scale = torch.ones(1)

    class Forgot(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Forgot()


def test_default_initialisation_bounds():
    torch.manual_seed(0)
    linear = nn.Linear(100, 50)
    bound = 1 / math.sqrt(100)
    assert linear.weight.abs().max().item() <= bound and linear.weight.abs().max().item() > 0.9 * bound
    assert linear.bias.abs().max().item() <= bound
    conv = nn.Conv2d(3, 8, 5)
    assert conv.weight.abs().max().item() <= 1 / math.sqrt(3 * 25)
    assert nn.Embedding(10, 4, padding_idx=0).weight[0].tolist() == [0.0] * 4


def test_layer_shapes_in_nchw():
    x = torch.randn(2, 3, 8, 8)
    assert nn.Conv2d(3, 5, 3, stride=2, padding=1)(x).shape == (2, 5, 4, 4)
    assert nn.Conv2d(3, 5, 3, padding="same")(x).shape == (2, 5, 8, 8)
    assert nn.MaxPool2d(2)(x).shape == (2, 3, 4, 4)
    assert nn.AvgPool2d(3, stride=1, padding=1)(x).shape == (2, 3, 8, 8)
    assert nn.AdaptiveAvgPool2d((1, 1))(x).shape == (2, 3, 1, 1)
    assert nn.AdaptiveAvgPool2d(2)(x).shape == (2, 3, 2, 2)
    assert nn.Flatten()(x).shape == (2, 192)
    assert nn.LayerNorm([8, 8])(x).shape == (2, 3, 8, 8)
    assert nn.Embedding(10, 4)(torch.tensor([[1, 2], [3, 9]])).shape == (2, 2, 4)
    with pytest.raises(RuntimeError, match="expected input\\[2, 3, 8, 8\\] to have 4 channels, but got 3"):
        nn.Conv2d(4, 5, 3)(x)
    with pytest.raises(NotImplementedError, match="not simulated by ipu-teach: choose an output size that divides"):
        nn.AdaptiveAvgPool2d(3)(x)


def test_dropout_scales_in_training_only():
    torch.manual_seed(0)
    drop = nn.Dropout(0.5)
    y = drop(torch.ones(1000))
    assert set(np.unique(y.numpy()).tolist()) == {0.0, 2.0} and 400 < int((y > 0).sum().item()) < 600
    assert torch.equal(drop.eval()(torch.ones(5)), torch.ones(5))


def test_batchnorm_running_statistics():
    bn = nn.BatchNorm2d(2)
    x = torch.randn(4, 2, 3, 3) * 3 + 1
    y = bn(x)
    np.testing.assert_allclose(y.detach().numpy().mean(axis=(0, 2, 3)), 0, atol=1e-5)
    batch = x.numpy().transpose(1, 0, 2, 3).reshape(2, -1)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * batch.mean(1), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * batch.var(1, ddof=1), rtol=1e-5)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    mean, var = bn.running_mean.numpy()[:, None, None], bn.running_var.numpy()[:, None, None]
    expected = (x.numpy() - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(bn(x).detach().numpy(), expected, rtol=1e-4, atol=1e-5)


def _w(*shape, seed=1):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape))


@pytest.mark.parametrize(
    "name, function, shape",
    [
        ("linear", lambda x: (F.linear(x, _w(3, 4), _w(3)) ** 2).sum(), (2, 4)),
        ("conv2d", lambda x: (F.conv2d(x, _w(3, 2, 3, 3), _w(3), stride=2, padding=1) ** 2).sum(), (2, 2, 5, 5)),
        ("max_pool", lambda x: (F.max_pool2d(x, 2) * _w(1, 2, 2, 2)).sum(), (1, 2, 4, 4)),
        ("avg_pool_padded", lambda x: (F.avg_pool2d(x, 3, 2, 1) * _w(1, 2, 2, 2)).sum(), (1, 2, 4, 4)),
        ("adaptive", lambda x: (F.adaptive_avg_pool2d(x, 2) * _w(1, 2, 2, 2)).sum(), (1, 2, 4, 4)),
        ("gelu", lambda x: (F.gelu(x) * _w(3, 4)).sum(), (3, 4)),
        ("gelu_tanh", lambda x: (F.gelu(x, approximate="tanh") * _w(3, 4)).sum(), (3, 4)),
        ("layer_norm", lambda x: (F.layer_norm(x, (4,), _w(4), _w(4, seed=2)) * _w(3, 4)).sum(), (3, 4)),
        (
            "batch_norm_train",
            lambda x: (F.batch_norm(x, None, None, _w(2), _w(2, seed=2), training=True) * _w(3, 2, 2, 2)).sum(),
            (3, 2, 2, 2),
        ),
        ("group_norm", lambda x: (F.group_norm(x, 2, _w(4), _w(4, seed=2)) * _w(2, 4, 3)).sum(), (2, 4, 3)),
        ("cross_entropy", lambda x: F.cross_entropy(x, torch.tensor([0, 2, 1])), (3, 4)),
        ("cross_entropy_smooth", lambda x: F.cross_entropy(x, torch.tensor([0, 2, 1]), label_smoothing=0.1), (3, 4)),
        (
            "cross_entropy_weighted",
            lambda x: F.cross_entropy(x, torch.tensor([0, 2, -100]), weight=torch.tensor([1.0, 2.0, 3.0, 4.0])),
            (3, 4),
        ),
        ("nll", lambda x: F.nll_loss(F.log_softmax(x, 1), torch.tensor([3, 2, 1])), (3, 4)),
        ("mse", lambda x: F.mse_loss(x, _w(3, 4)), (3, 4)),
        ("bce", lambda x: F.binary_cross_entropy(x.sigmoid(), torch.tensor(np.eye(3, 4))), (3, 4)),
        ("bce_logits", lambda x: F.binary_cross_entropy_with_logits(x, torch.tensor(np.eye(3, 4))), (3, 4)),
    ],
)
def test_functional_gradients_match_finite_differences(name, function, shape):
    check_gradient(function, shape)


def test_loss_values_follow_pytorch_formulas():
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
    target = torch.tensor([1, 2])
    log_p = logits.numpy() - np.log(np.exp(logits.numpy()).sum(1, keepdims=True))
    nll = -log_p[[0, 1], [1, 2]]
    assert nn.CrossEntropyLoss()(logits, target).item() == pytest.approx(nll.mean(), rel=1e-6)
    assert nn.CrossEntropyLoss(reduction="sum")(logits, target).item() == pytest.approx(nll.sum(), rel=1e-6)
    assert nn.CrossEntropyLoss(reduction="none")(logits, target).numpy() == pytest.approx(nll, rel=1e-6)
    weighted = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 4.0]))(logits, target).item()
    assert weighted == pytest.approx((2 * nll[0] + 4 * nll[1]) / 6, rel=1e-6)
    p = torch.tensor([0.0, 1.0, 0.25])
    y = torch.tensor([1.0, 1.0, 0.0])
    assert nn.BCELoss(reduction="none")(p, y).numpy() == pytest.approx([100.0, 0.0, -np.log(0.75)], rel=1e-6)
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match=r"Expected input batch_size \(2\) to match target batch_size \(3\)"):
        F.cross_entropy(logits, torch.tensor([0, 1, 2]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        F.cross_entropy(logits, torch.tensor([0, 7]))
    with pytest.raises(ValueError, match="target size .* different to the input size"):
        F.mse_loss(torch.zeros(3, 1), torch.zeros(3))


def test_embedding_padding_row_gets_no_gradient():
    embedding = nn.Embedding(4, 2, padding_idx=1)
    with torch.no_grad():
        embedding.weight[1] = torch.tensor([5.0, 6.0])
    out = embedding(torch.tensor([[1, 2], [1, 1]]))
    assert out[0, 0].tolist() == [5.0, 6.0]  # looked up as any row
    out.sum().backward()
    assert embedding.weight.grad[1].tolist() == [0.0, 0.0] and embedding.weight.grad[2].tolist() == [1.0, 1.0]


def test_half_precision_layers_compute_in_half():
    linear = nn.Linear(3, 2).half()
    out = linear(torch.ones(4, 3).half())
    assert out.dtype == torch.float16 and linear.weight.dtype == torch.float16
    out.float().sum().backward()
    assert linear.weight.grad.dtype == torch.float16


def test_sequential_and_module_list_index_and_slice():
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and [name for name, _ in tail.named_children()] == ["1", "2"]
    assert seq[-1] is seq[2] and len(seq) == 3 and list(seq)[0] is seq[0]
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()]).append(nn.Sigmoid())
    assert isinstance(layers[:2], nn.ModuleList) and len(layers) == 3 and isinstance(layers[2], nn.Sigmoid)
    assert not isinstance(seq, nn.ModuleList)
