"""Write the PyTorch golden fixture that tests/torch_frontend/test_torch_goldens.py compares ipu_teach.torch with.

Runs ONLY in a separate reference environment with real PyTorch (never a run-time or test dependency of
ipu-teach); the tests read the JSON it writes and need nothing else:

    python3 -m venv /work/refenv-torch && /work/refenv-torch/bin/pip install torch numpy
    nice /work/refenv-torch/bin/python tools/make_torch_goldens.py  # writes golden/torch_goldens.json
    nice /work/refenv-torch/bin/python tools/make_torch_goldens.py transforms  # golden/torchvision_transforms.json
    (the second needs torchvision and Pillow too; both in tests/torch_frontend)

For every layer: its parameters, an input, the output and the gradients of ``sum(output * seed)`` with respect
to the input and every parameter. For every loss: the value and the input's gradient. For every optimizer: a
20-step training trajectory (losses and final weights) of a small MLP on fixed data. Inputs are drawn from a
seeded numpy generator and stored with the results, so the tests feed ipu-teach exactly what PyTorch was fed.
The torch version is recorded in the fixture.
"""

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "torch_frontend" / "golden" / "torch_goldens.json"
RNG = np.random.default_rng(23)


def _array(*shape, low=None):
    values = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(values) + low if low is not None else values


def _listed(tensor):
    return tensor.detach().numpy().tolist()


LAYERS = [
    # (case name, nn class, args, kwargs, input shape, train mode, integer input range)
    ("linear", "Linear", [5, 3], {}, (4, 5), True, None),
    ("conv2d", "Conv2d", [2, 3, 3], {"stride": 2, "padding": 1}, (2, 2, 7, 7), True, None),
    ("conv2d_same", "Conv2d", [2, 4, 3], {"padding": "same", "bias": False}, (1, 2, 5, 5), True, None),
    ("max_pool", "MaxPool2d", [2], {}, (2, 3, 6, 6), True, None),
    ("max_pool_stride", "MaxPool2d", [3], {"stride": 2}, (1, 2, 7, 7), True, None),
    ("avg_pool_padded", "AvgPool2d", [3], {"stride": 2, "padding": 1}, (1, 2, 6, 6), True, None),
    ("adaptive_avg", "AdaptiveAvgPool2d", [(1, 1)], {}, (2, 3, 4, 4), True, None),
    ("adaptive_avg_2", "AdaptiveAvgPool2d", [2], {}, (2, 3, 6, 4), True, None),
    ("relu", "ReLU", [], {}, (3, 4), True, None),
    ("sigmoid", "Sigmoid", [], {}, (3, 4), True, None),
    ("tanh", "Tanh", [], {}, (3, 4), True, None),
    ("softmax", "Softmax", [1], {}, (3, 4), True, None),
    ("softmax_dim0", "Softmax", [0], {}, (3, 4), True, None),
    ("log_softmax", "LogSoftmax", [1], {}, (3, 4), True, None),
    ("gelu", "GELU", [], {}, (3, 4), True, None),
    ("gelu_tanh", "GELU", [], {"approximate": "tanh"}, (3, 4), True, None),
    ("flatten", "Flatten", [], {}, (2, 3, 2, 2), True, None),
    ("batch_norm_train", "BatchNorm2d", [3], {}, (4, 3, 3, 3), True, None),
    ("batch_norm_eval", "BatchNorm2d", [3], {}, (4, 3, 3, 3), False, None),
    ("layer_norm", "LayerNorm", [6], {}, (3, 6), True, None),
    ("layer_norm_2d", "LayerNorm", [[2, 3]], {}, (4, 2, 3), True, None),
    ("embedding", "Embedding", [7, 3], {}, (2, 4), True, (0, 7)),
    ("group_norm", "GroupNorm", [2, 4], {}, (3, 4, 2, 3), True, None),
]


def _randomise(torch, module):
    """Non-default parameters and buffers, so the test checks they are used (e.g. BatchNorm's gamma)."""
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(_array(*p.shape)))
        if hasattr(module, "running_var"):
            module.running_mean.copy_(torch.from_numpy(_array(*module.running_mean.shape)))
            module.running_var.copy_(torch.from_numpy(_array(*module.running_var.shape, low=0.5)))


def layer_cases(torch):
    cases = []
    for name, cls, args, kwargs, shape, train, integers in LAYERS:
        module = getattr(torch.nn, cls)(*args, **kwargs)
        _randomise(torch, module)
        module.train(train)
        state = {k: _listed(v) for k, v in module.state_dict().items()}
        if integers:
            x = torch.from_numpy(RNG.integers(*integers, shape).astype(np.int64))
        else:
            x = torch.from_numpy(_array(*shape)).requires_grad_()
        out = module(x)
        seed = _array(*out.shape)
        (out * torch.from_numpy(seed)).sum().backward()
        cases.append(
            {
                "name": name,
                "module": cls,
                "args": args,
                "kwargs": kwargs,
                "train": train,
                "state": state,
                "input": _listed(x),
                "seed": seed.tolist(),
                "output": _listed(out),
                "input_grad": None if integers else _listed(x.grad),
                "param_grads": {k: _listed(p.grad) for k, p in module.named_parameters()},
                "state_after": {k: _listed(v) for k, v in module.state_dict().items()},
            }
        )
    return cases


def loss_cases(torch):
    logits = _array(5, 4)
    labels = RNG.integers(0, 4, 5)
    labels_ignored = labels.copy()
    labels_ignored[1] = -100
    probabilities = np.abs(_array(5, 4))
    probabilities /= probabilities.sum(1, keepdims=True)
    unit = 1 / (1 + np.exp(-_array(5, 3)))
    binary = RNG.integers(0, 2, (5, 3)).astype(np.float32)
    specs = [
        ("cross_entropy", "CrossEntropyLoss", {}, logits, labels),
        ("cross_entropy_sum", "CrossEntropyLoss", {"reduction": "sum"}, logits, labels),
        ("cross_entropy_none", "CrossEntropyLoss", {"reduction": "none"}, logits, labels),
        ("cross_entropy_weighted", "CrossEntropyLoss", {"weight": [0.5, 1.0, 2.0, 3.0]}, logits, labels_ignored),
        ("cross_entropy_smoothing", "CrossEntropyLoss", {"label_smoothing": 0.1}, logits, labels),
        ("cross_entropy_probabilities", "CrossEntropyLoss", {}, logits, probabilities),
        ("cross_entropy_4d", "CrossEntropyLoss", {}, _array(2, 3, 2, 2), RNG.integers(0, 3, (2, 2, 2))),
        ("nll", "NLLLoss", {}, np.log(probabilities), labels),
        ("nll_ignored", "NLLLoss", {"weight": [1.0, 2.0, 0.5, 1.5]}, np.log(probabilities), labels_ignored),
        ("mse", "MSELoss", {}, logits, _array(5, 4)),
        ("mse_sum", "MSELoss", {"reduction": "sum"}, logits, _array(5, 4)),
        ("bce", "BCELoss", {}, unit, binary),
        ("bce_with_logits", "BCEWithLogitsLoss", {}, _array(5, 3) * 4, binary),
    ]
    cases = []
    for name, cls, kwargs, prediction, target in specs:
        made = {k: torch.tensor(v) if isinstance(v, list) else v for k, v in kwargs.items()}
        x = torch.from_numpy(prediction.astype(np.float32)).requires_grad_()
        t = torch.from_numpy(target)
        value = getattr(torch.nn, cls)(**made)(x, t)
        value.backward(torch.ones_like(value))
        cases.append(
            {
                "name": name,
                "loss": cls,
                "kwargs": kwargs,
                "input": _listed(x),
                "target": target.tolist(),
                "target_dtype": str(target.dtype),
                "value": _listed(value),
                "input_grad": _listed(x.grad),
            }
        )
    return cases


OPTIMIZERS = [
    ("sgd", "SGD", {"lr": 0.1}, None),
    ("sgd_momentum", "SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}, None),
    ("sgd_nesterov", "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}, None),
    ("sgd_dampening", "SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.3}, None),
    ("adam", "Adam", {"lr": 0.01}, None),
    ("adam_weight_decay_amsgrad", "Adam", {"lr": 0.01, "weight_decay": 0.05, "amsgrad": True}, None),
    ("adamw", "AdamW", {"lr": 0.01}, None),
    ("rmsprop", "RMSprop", {"lr": 0.01}, None),
    ("rmsprop_centered_momentum", "RMSprop", {"lr": 0.005, "momentum": 0.8, "centered": True}, None),
    ("sgd_steplr", "SGD", {"lr": 0.2, "momentum": 0.5}, ("StepLR", {"step_size": 5, "gamma": 0.5})),
    ("adam_exponentiallr", "Adam", {"lr": 0.02}, ("ExponentialLR", {"gamma": 0.9})),
]


def optimizer_cases(torch):
    x = _array(16, 4)
    y = RNG.integers(0, 3, 16)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    cases = []
    for name, cls, kwargs, scheduler in OPTIMIZERS:
        model.load_state_dict(initial)
        optimizer = getattr(torch.optim, cls)(model.parameters(), **kwargs)
        schedule = getattr(torch.optim.lr_scheduler, scheduler[0])(optimizer, **scheduler[1]) if scheduler else None
        losses = []
        for _ in range(20):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y))
            loss.backward()
            optimizer.step()
            if schedule:
                schedule.step()
            losses.append(loss.item())
        cases.append(
            {
                "name": name,
                "optimizer": cls,
                "kwargs": kwargs,
                "scheduler": scheduler,
                "losses": losses,
                "final": {k: _listed(v) for k, v in model.state_dict().items()},
            }
        )
    return {
        "x": x.tolist(),
        "y": y.tolist(),
        "initial": {k: _listed(v) for k, v in initial.items()},
        "cases": cases,
    }


MNIST_SUBSET = pathlib.Path(__file__).resolve().parent.parent / "ipu_teach" / "keras" / "datasets" / "mnist_subset.npz"
CNN_STEPS = 100


def cnn_weights():
    """The workshop CNN's weights, drawn by numpy (so the test draws the same ones without storing them)."""
    rng = np.random.default_rng(5)
    shapes = {
        "0.weight": (32, 1, 3, 3), "0.bias": (32,), "3.weight": (64, 32, 3, 3), "3.bias": (64,),
        "7.weight": (128, 1600), "7.bias": (128,), "9.weight": (10, 128), "9.bias": (10,),
    }  # fmt: skip
    fan_in = {"0": 9, "3": 288, "7": 1600, "9": 128}
    return {
        name: rng.uniform(-1, 1, shape).astype(np.float32) / np.float32(np.sqrt(fan_in[name.split(".")[0]]))
        for name, shape in shapes.items()
    }


def train_cnn(torch, steps=CNN_STEPS) -> list:
    """The workshop's MNIST CNN (softmax output, cross-entropy, SGD lr 0.05, batch 8) trained ``steps`` steps on
    the first images of ipu-teach's bundled MNIST subset, in order, with ``torch`` (real PyTorch here,
    ipu_teach.torch in the test): the loss of every step. (Trained much longer, float32 rounding differences
    grow until two runs part: the regime is chaotic, a perturbation of 1e-7 in one weight does the same.)"""
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(1),
    )  # fmt: skip
    model.load_state_dict({k: torch.from_numpy(v) for k, v in cnn_weights().items()})
    with np.load(MNIST_SUBSET) as data:
        x = ((data["x_train"][: steps * 8].astype(np.float32) / 255 - 0.1307) / 0.3081)[:, None]
        y = data["y_train"][: steps * 8].astype(np.int64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for step in range(steps):
        optimizer.zero_grad()
        part = slice(step * 8, (step + 1) * 8)
        loss = nn.functional.cross_entropy(model(torch.from_numpy(x[part])), torch.from_numpy(y[part]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


TRANSFORMS_OUT = OUT.with_name("torchvision_transforms.json")
RESIZES = [
    # (case name, image shape (H, W) or (H, W, C), what is resized: "pil" or "tensor", Resize's arguments)
    ("pil_bilinear_short_side", (28, 28), "pil", {"size": 40}),
    ("pil_nearest_pair", (28, 28), "pil", {"size": [10, 37], "interpolation": "nearest"}),
    ("pil_bicubic_rgb", (9, 13, 3), "pil", {"size": 20, "interpolation": "bicubic"}),
    ("pil_max_size", (10, 30), "pil", {"size": 8, "max_size": 20}),
    ("pil_downscale", (28, 28), "pil", {"size": 11}),
    ("tensor_bilinear_up", (28, 28), "tensor", {"size": 40}),
    ("tensor_bilinear_down_rgb", (17, 23, 3), "tensor", {"size": [7, 9]}),
]
"""Resize cases; the images are uint8 drawn from a generator of their own (the other fixture stays as it is)."""


def transform_cases(torch, torchvision):
    """torchvision's Resize (on PIL images as its datasets give them, and on tensors), ConvertImageDtype and
    ToPILImage on seeded images."""
    from PIL import Image

    transforms = torchvision.transforms
    rng = np.random.default_rng(2023)
    resizes = []
    for name, shape, kind, kwargs in RESIZES:
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        arguments = dict(kwargs)
        if "interpolation" in arguments:
            arguments["interpolation"] = transforms.InterpolationMode(arguments["interpolation"])
        resize = transforms.Resize(**arguments)
        if kind == "pil":
            output = np.asarray(resize(Image.fromarray(image))).tolist()
        else:
            output = _listed(resize(transforms.ToTensor()(image)))
        resizes.append({"name": name, "image": image.tolist(), "kind": kind, "kwargs": kwargs, "output": output})
    values = rng.random((2, 3, 4), dtype=np.float32)
    scaled = torch.from_numpy(values)
    integers = torch.from_numpy(rng.integers(0, 256, (1, 3, 4), dtype=np.uint8))
    converts = {
        "float_to_half": _listed(transforms.ConvertImageDtype(torch.half)(scaled).float()),
        "float_to_uint8": _listed(transforms.ConvertImageDtype(torch.uint8)(scaled)),
        "uint8_to_float": _listed(transforms.ConvertImageDtype(torch.float)(integers)),
    }
    to_pil = np.asarray(transforms.ToPILImage()(scaled[:1])).tolist()
    return {
        "resizes": resizes,
        "convert": {"values": values.tolist(), "integers": _listed(integers), **converts},
        "to_pil": {"values": values[:1].tolist(), "output": to_pil},
    }


def write_transforms():
    import torch
    import torchvision

    fixture = {
        "torch_version": torch.__version__,
        "torchvision_version": torchvision.__version__,
        "made_by": "tools/make_torch_goldens.py transforms",
        **transform_cases(torch, torchvision),
    }
    TRANSFORMS_OUT.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    size = TRANSFORMS_OUT.stat().st_size
    print(f"wrote {TRANSFORMS_OUT} ({size:,} bytes) with torchvision {torchvision.__version__}")


def main():
    import sys

    if sys.argv[1:] == ["transforms"]:  # only torchvision's transforms (torchvision_transforms.json)
        return write_transforms()
    import torch  # only here: the test imports this module's recipes without PyTorch

    torch.manual_seed(0)
    fixture = {
        "torch_version": torch.__version__,
        "made_by": "tools/make_torch_goldens.py",
        "layers": layer_cases(torch),
        "losses": loss_cases(torch),
        "optimizers": optimizer_cases(torch),
        "cnn": {"steps": CNN_STEPS, "losses": train_cnn(torch)},
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes) with torch {torch.__version__}")


if __name__ == "__main__":
    main()
