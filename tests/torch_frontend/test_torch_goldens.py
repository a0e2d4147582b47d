"""ipu_teach.torch against real PyTorch: outputs, gradients and 20-step optimizer trajectories, to float32
precision, from the fixture tools/make_torch_goldens.py wrote with real PyTorch (its version is in the file)."""

import json
from pathlib import Path

import numpy as np
import pytest
from helpers.scripts import load_script

from ipu_teach import torch

make_torch_goldens = load_script("tools/make_torch_goldens.py")  # the recipe the fixture was made with

GOLDEN = json.loads((Path(__file__).parent / "golden" / "torch_goldens.json").read_text())
RTOL, ATOL = 2e-5, 2e-6


def close(got, expected, what, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol, atol, err_msg=what)


def test_the_fixture_records_the_torch_version():
    assert GOLDEN["torch_version"].startswith("2.") and len(GOLDEN["layers"]) >= 20


@pytest.mark.parametrize("case", GOLDEN["layers"], ids=lambda c: c["name"])
def test_layer_matches_pytorch(case):
    module = getattr(torch.nn, case["module"])(*case["args"], **case["kwargs"])
    module.load_state_dict({k: torch.tensor(v) for k, v in case["state"].items()})
    module.train(case["train"])
    integer = case["input_grad"] is None
    x = torch.tensor(case["input"]) if integer else torch.tensor(case["input"], requires_grad=True)
    out = module(x)
    close(out.detach().numpy(), case["output"], "output")
    (out * torch.tensor(case["seed"])).sum().backward()
    if not integer:
        close(x.grad.numpy(), case["input_grad"], "input gradient")
    for name, p in module.named_parameters():
        close(p.grad.numpy(), case["param_grads"][name], f"gradient of {name}")
    for name, value in module.state_dict().items():
        close(value.numpy(), case["state_after"][name], f"{name} after the call")


@pytest.mark.parametrize("case", GOLDEN["losses"], ids=lambda c: c["name"])
def test_loss_matches_pytorch(case):
    kwargs = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    x = torch.tensor(case["input"], requires_grad=True)
    target = torch.tensor(np.asarray(case["target"], case["target_dtype"]))
    value = getattr(torch.nn, case["loss"])(**kwargs)(x, target)
    close(value.detach().numpy(), case["value"], "value")
    value.backward(torch.ones_like(value) if value.ndim else None)
    close(x.grad.numpy(), case["input_grad"], "input gradient")


@pytest.mark.parametrize("case", GOLDEN["optimizers"]["cases"], ids=lambda c: c["name"])
def test_optimizer_trajectory_matches_pytorch(case):
    data = GOLDEN["optimizers"]
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    model.load_state_dict({k: torch.tensor(v) for k, v in data["initial"].items()})
    optimizer = getattr(torch.optim, case["optimizer"])(model.parameters(), **case["kwargs"])
    scheduler = case["scheduler"]
    schedule = getattr(torch.optim.lr_scheduler, scheduler[0])(optimizer, **scheduler[1]) if scheduler else None
    x, y = torch.tensor(data["x"]), torch.tensor(data["y"])
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if schedule:
            schedule.step()
        losses.append(loss.item())
    close(losses, case["losses"], "losses", rtol=1e-4, atol=1e-6)
    for name, value in model.state_dict().items():
        close(value.numpy(), case["final"][name], f"{name} after 20 steps", rtol=1e-4, atol=1e-5)


def test_the_workshop_cnn_trains_as_in_pytorch():
    """The same weights and batches give PyTorch's loss at every one of 100 steps (see make_torch_goldens)."""
    losses = make_torch_goldens.train_cnn(torch, GOLDEN["cnn"]["steps"])
    close(losses, GOLDEN["cnn"]["losses"], "losses of the workshop CNN", rtol=1e-4, atol=1e-5)
