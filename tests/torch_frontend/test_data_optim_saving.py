"""torch.utils.data (batches, shuffling with a generator, splits), the optimizers' update formulas, the LR
schedulers, torch.save / torch.load without pickle, and torchvision's offline MNIST and transforms."""

import gzip
import io
import zipfile

import numpy as np
import pytest

from ipu_teach import torch, torchvision
from ipu_teach.torch.utils.data import DataLoader, Subset, TensorDataset, random_split


def test_dataloader_batches_shuffles_and_drops_last():
    data = TensorDataset(torch.arange(10).float(), torch.arange(10))
    assert [y.tolist() for _, y in DataLoader(data, batch_size=4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(DataLoader(data, batch_size=4)) == 3 and len(DataLoader(data, batch_size=4, drop_last=True)) == 2

    def order(seed):
        loader = DataLoader(data, batch_size=5, shuffle=True, generator=torch.Generator().manual_seed(seed))
        return [y.tolist() for _, y in loader]

    assert order(1) == order(1) and order(1) != order(2)
    assert sorted(sum(order(1), [])) == list(range(10))
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        DataLoader(data, batch_size=0)


def test_default_collate_of_tuples_numbers_and_arrays():
    loader = DataLoader([(np.ones((2, 2), np.uint8), 3, 0.5)] * 4, batch_size=2)
    images, ints, floats = next(iter(loader))
    assert images.shape == (2, 2, 2) and images.dtype == torch.uint8
    assert ints.dtype == torch.int64 and floats.dtype == torch.float64


def test_random_split_and_subset():
    data = TensorDataset(torch.arange(10))
    a, b = random_split(data, [7, 3], generator=torch.Generator().manual_seed(0))
    assert len(a) == 7 and len(b) == 3
    assert sorted([x.item() for (x,) in a] + [x.item() for (x,) in b]) == list(range(10))
    assert [len(s) for s in random_split(data, [0.5, 0.3, 0.2])] == [5, 3, 2]
    assert Subset(data, [4, 2])[1][0].item() == 2
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(data, [5, 6])


def _run(optimizer_class, steps=3, **kwargs):
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = optimizer_class([w], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        (w * w * torch.tensor([1.0, 3.0])).sum().backward()
        opt.step()
    return w.detach().numpy().astype(np.float64)


def _reference(update, steps=3):
    """The same quadratic, gradient (2, 6) * w, with ``update(w, g, state)`` in float64."""
    w, state = np.array([1.0, -2.0]), {}
    for _ in range(steps):
        w = update(w, np.array([2.0, 6.0]) * w, state)
    return w


def test_sgd_momentum_nesterov_weight_decay():
    def sgd(w, g, state, lr=0.1, momentum=0.9, wd=0.01):
        d = g + wd * w
        state["b"] = d if "b" not in state else momentum * state["b"] + d
        return w - lr * (d + momentum * state["b"])

    got = _run(torch.optim.SGD, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    np.testing.assert_allclose(got, _reference(sgd), rtol=1e-6)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1, nesterov=True)


@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_and_adamw(decoupled):
    lr, b1, b2, eps, wd = 0.1, 0.9, 0.999, 1e-8, 0.1

    def adam(w, g, state):
        t = state["t"] = state.get("t", 0) + 1
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        m = state["m"] = b1 * state.get("m", 0) + (1 - b1) * g
        v = state["v"] = b2 * state.get("v", 0) + (1 - b2) * g * g
        return w - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)

    got = _run(torch.optim.AdamW if decoupled else torch.optim.Adam, lr=lr, weight_decay=wd)
    np.testing.assert_allclose(got, _reference(adam), rtol=1e-5)


def test_rmsprop_centered_momentum():
    lr, alpha, eps, momentum = 0.01, 0.99, 1e-8, 0.5

    def rmsprop(w, g, state):
        v = state["v"] = alpha * state.get("v", 0) + (1 - alpha) * g * g
        a = state["a"] = alpha * state.get("a", 0) + (1 - alpha) * g
        b = state["b"] = momentum * state.get("b", 0) + g / (np.sqrt(v - a * a) + eps)
        return w - lr * b

    got = _run(torch.optim.RMSprop, lr=lr, centered=True, momentum=momentum)
    np.testing.assert_allclose(got, _reference(rmsprop), rtol=1e-5)


def test_schedulers_set_the_groups_lr():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    step = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        step.step()
    assert lrs == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01])
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=2.0)
    exponential = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    exponential.step()
    exponential.step()
    assert exponential.get_last_lr() == [0.5]


def test_save_and_load_a_checkpoint(tmp_path):
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    opt = torch.optim.Adam(net.parameters())
    net(torch.randn(4, 3)).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.pt"
    torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "epoch": 2, "note": None}, path)
    assert not list(tmp_path.glob(".*"))  # written atomically, no temporary left
    loaded = torch.load(path)
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    fresh.load_state_dict(loaded["model"])
    assert torch.equal(fresh[0].weight, net[0].weight) and fresh[1].num_batches_tracked.item() == 1
    assert loaded["epoch"] == 2 and loaded["note"] is None and loaded["optimizer"]["state"][0]["step"].item() == 1
    with pytest.raises(TypeError, match="does not pickle objects; save obj.state_dict"):
        torch.save(net, tmp_path / "model.pt")


def test_a_pytorch_checkpoint_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "real.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
    with pytest.raises(ValueError, match="it is a PyTorch checkpoint .* which can run any code.*np.savez"):
        torch.load(path)
    with pytest.raises(ValueError, match="not a zip file"):
        torch.load(io.BytesIO(b"\x80\x02}q\x00."))


def test_torchvision_mnist_offline_and_transforms(tmp_path, capsys):
    transform = torchvision.transforms.Compose(
        [torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((0.1307,), (0.3081,))]
    )
    test = torchvision.datasets.MNIST(tmp_path, train=False, download=True, transform=transform)
    assert "ipu-teach: MNIST" in capsys.readouterr().out
    image, label = test[0]
    assert image.shape == (1, 28, 28) and image.dtype == torch.float32 and isinstance(label, int)
    assert image.min().item() == pytest.approx(-0.1307 / 0.3081, rel=1e-5)


def test_torchvision_reads_idx_files_and_names_missing_ones(tmp_path):
    raw = tmp_path / "FashionMNIST" / "raw"
    with pytest.raises(FileNotFoundError, match=f"t10k-images-idx3-ubyte.*in {raw}"):
        torchvision.datasets.FashionMNIST(tmp_path, train=False)
    raw.mkdir(parents=True)
    images = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    (raw / "t10k-images-idx3-ubyte").write_bytes(
        b"\0\0\x08\x03" + b"".join(n.to_bytes(4, "big") for n in (2, 3, 3)) + images.tobytes()
    )
    (raw / "t10k-labels-idx1-ubyte").write_bytes(b"\0\0\x08\x01" + (2).to_bytes(4, "big") + bytes([7, 1]))
    data = torchvision.datasets.FashionMNIST(tmp_path, train=False)
    assert len(data) == 2 and data[1][1] == 1 and data[1][0].tolist() == images[1].tolist()
    with pytest.raises(FileNotFoundError, match="cifar-10-batches-bin .* in"):
        torchvision.datasets.CIFAR10(tmp_path)


def test_fashion_mnist_comes_from_keras_cache_when_torchvisions_folder_lacks_it(tmp_path, monkeypatch):
    """Without ``<root>/FashionMNIST/raw``, FashionMNIST reads the four files of Keras' cache (what
    ``keras.datasets.fashion_mnist`` reads); without either, the error names both folders."""
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "keras"))
    with pytest.raises(
        FileNotFoundError, match=r"FashionMNIST/raw .*or the four \.gz files in .*keras/datasets/fashion-mnist"
    ):
        torchvision.datasets.FashionMNIST(tmp_path, train=True)
    cache = tmp_path / "keras" / "datasets" / "fashion-mnist"
    cache.mkdir(parents=True)
    rng = np.random.default_rng(0)
    x_train, y_train = rng.integers(0, 256, (3, 28, 28)), np.array([4, 9, 0])
    x_test, y_test = rng.integers(0, 256, (2, 28, 28)), np.array([1, 7])
    for name, values in (("train-images-idx3", x_train), ("train-labels-idx1", y_train),
                         ("t10k-images-idx3", x_test), ("t10k-labels-idx1", y_test)):  # fmt: skip
        header = (0x800 + values.ndim).to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in values.shape)
        (cache / f"{name}-ubyte.gz").write_bytes(gzip.compress(header + values.astype(np.uint8).tobytes()))
    train = torchvision.datasets.FashionMNIST(tmp_path, train=True, transform=torchvision.transforms.ToTensor())
    test = torchvision.datasets.FashionMNIST(tmp_path, train=False)
    assert len(train) == len(x_train) and len(test) == len(x_test)
    image, label = train[1]
    assert image.shape == (1, 28, 28) and label == int(y_train[1])
    np.testing.assert_array_equal(image.numpy()[0], x_train[1].astype(np.float32) / np.float32(255))
    assert test[0][0].tolist() == x_test[0].tolist()
