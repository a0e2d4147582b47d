"""Fidelity cases simulated through ipu-teach's PopTorch front end (issue 23), not a Keras expression of them.

A case whose ``ipu_teach`` entry has ``"poptorch_run"`` is Graphcore's PopTorch basics tutorial
(tutorials/tutorials/pytorch/basics/walkthrough.py of graphcore/examples) as the workshop slides ran it: its
``ClassificationModel`` written with :mod:`ipu_teach.torch`, wrapped by ``poptorch.trainingModel`` and
``poptorch.inferenceModel`` with the tutorial's options, batch sizes and optimizer. :func:`simulate` gives the
figures the tutorial prints: each "Graph compilation" (training, evaluation, the one-image inference) and the
"epochs" bar's total (the first call's compilation, then every call of every epoch). Every call of a model
costs the same simulated time, so two calls on zeros shaped like the data give it (as
``fidelity_cases.custom_loop_run_time`` does); the simulated figures do not depend on the data's values.
The accuracy needs the real training: :func:`train_and_evaluate` runs the tutorial's loops on Fashion-MNIST
(torchvision's folder or Keras' cache) when it is there.

A case whose entry has ``"poptorch_loop"`` is a tutorial's training loop over an asynchronous ``poptorch.DataLoader``
(the pipelining tutorial, tutorials/tutorials/pytorch/pipelining/README.md of graphcore/examples): its ``Network``
with its ``poptorch.Block`` s, its options (pipelined stages, ``deviceIterations``, ``gradientAccumulation``,
``outputMode``, the optimizer's state off chip) and its optimizer; :func:`simulate_loop` gives the training
compilation and the items per second of an epoch after the first, the DataLoader's workers costed by
``ipu.host.asynchronous_epoch_seconds``. Such a case is in bench_fidelity's validation table (it has no Keras
expression to stand in for it).
"""

from __future__ import annotations

import contextlib
import io

from ipu_teach import ipu, poptorch, torch, torchvision
from ipu_teach.ipu import custom_loop, system
from ipu_teach.torch import nn

IMAGE = (1, 28, 28)


class ClassificationModel(nn.Module):
    """The basics tutorial's model, as it writes it (its loss inside ``forward`` while training)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 5, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(5, 12, 5)
        self.norm = nn.GroupNorm(3, 12)
        self.fc1 = nn.Linear(972, 100)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(100, 10)
        self.log_softmax = nn.LogSoftmax(dim=1)
        self.loss = nn.NLLLoss()

    def forward(self, x, labels=None):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.norm(self.relu(self.conv2(x)))
        x = torch.flatten(x, start_dim=1)
        x = self.relu(self.fc1(x))
        x = self.log_softmax(self.fc2(x))
        if self.training:
            return x, self.loss(x, labels)
        return x


class ConvLayer(nn.Module):
    """The pipelining tutorial's convolution block, as it writes it."""

    def __init__(self, in_channels, num_filters, kernel_size, pool_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, num_filters, kernel_size=kernel_size)
        self.pool = nn.MaxPool2d(kernel_size=pool_size)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = self.relu(x)
        return x


class Network(nn.Module):
    """The pipelining tutorial's model, as it writes it: four blocks, B1-B4, for the pipeline's stages."""

    def __init__(self):
        super().__init__()
        self.layer1 = ConvLayer(1, 10, 5, 2)
        self.layer2 = ConvLayer(10, 20, 5, 2)
        self.layer3 = nn.Linear(320, 256)
        self.layer3_act = nn.ReLU()
        self.layer4 = nn.Linear(256, 10)

    def forward(self, x):
        with poptorch.Block("B1"):
            x = self.layer1(x)
        with poptorch.Block("B2"):
            x = self.layer2(x)
        with poptorch.Block("B3"):
            x = x.view(-1, 320)
            x = self.layer3_act(self.layer3(x))
        with poptorch.Block("B4"):
            x = self.layer4(x)
        return x


class TrainingModelWithLoss(nn.Module):
    """The pipelining tutorial's training wrapper: the loss in the last block, B4."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss = nn.CrossEntropyLoss()

    def forward(self, args, labels=None):
        output = self.model(args)
        if labels is None:
            return output
        with poptorch.Block("B4"):
            loss = self.loss(output, labels)
        return output, loss


MODELS = {"basics_classification": ClassificationModel, "pipelining_network": Network}
MEASURES = ("training compile", "epochs", "evaluation compile", "inference compile", "accuracy")
"""What a figure of a ``poptorch_run`` case measures (its ``measure``): see :func:`figures`."""
LOOP_MEASURES = ("training compile", "epoch throughput")
"""What a figure of a ``poptorch_loop`` case measures: see :func:`simulate_loop`."""


def _optimizer(model, settings):
    settings = dict(settings)
    optimizers = {"sgd": poptorch.optim.SGD, "adamw": poptorch.optim.AdamW}
    return optimizers[settings.pop("name")](model.parameters(), **settings)


@contextlib.contextmanager
def _tutorial_training(spec):
    """The tutorial's model in training mode, its options and its trainingModel, made as the tutorial makes them
    (a fresh system, its seed 42), with PopTorch's printing kept quiet while the block runs."""
    system.reset()
    torch.manual_seed(42)  # as the tutorial
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        model = MODELS[spec["model"]]()
        model.train()
        opts = poptorch.Options()
        yield model, opts, poptorch.trainingModel(model, options=opts, optimizer=_optimizer(model, spec["optimizer"]))


def _timed(wrapped, *inputs, calls=1):
    """``(compile s, s per call)`` of ``calls`` calls of a new wrapped model, as ipu-teach's timings record them
    (cleared first: PopTorch's evaluation and inference models have the same name), detached after."""
    custom_loop.clear_timings()
    for _ in range(calls):
        wrapped(*inputs)
    wrapped.detachFromDevice()
    timing = custom_loop.timings()[wrapped._name]
    return timing.compile_seconds, (timing.seconds - timing.compile_seconds) / timing.calls


def simulate(spec, calls_simulated=2) -> dict:
    """``{"training": (compile s, s per call), "evaluation": compile s, "inference": compile s}`` of a
    ``poptorch_run`` entry: each model compiled and called on zeros, as the tutorial's loop calls it."""
    run = spec["poptorch_run"]
    with _tutorial_training(spec) as (model, opts, training):
        batch = run["train_batch"]
        trained = _timed(
            training, torch.zeros(batch, *IMAGE), torch.zeros(batch, dtype=torch.long), calls=calls_simulated
        )
        model.eval()
        evaluation = poptorch.inferenceModel(model, options=opts)
        evaluated = _timed(evaluation, torch.zeros(run["test_batch"], *IMAGE))
        inference = poptorch.inferenceModel(model, options=poptorch.Options())
        inferred = _timed(inference, torch.zeros(run["inference_batch"], *IMAGE))
    return {"training": trained, "evaluation": evaluated[0], "inference": inferred[0]}


def figures(case, simulated, accuracy=None) -> dict:
    """``{figure name: simulated value}``: each figure's ``measure`` in :func:`simulate`'s result; the epochs'
    total is the training compilation plus ``epochs x calls_per_epoch`` calls; the accuracy is None unless
    :func:`train_and_evaluate` measured it."""
    run = case["ipu_teach"]["poptorch_run"]
    compile_s, per_call = simulated["training"]
    values = {
        "training compile": compile_s,
        "epochs": compile_s + run["epochs"] * run["calls_per_epoch"] * per_call,
        "evaluation compile": simulated["evaluation"],
        "inference compile": simulated["inference"],
        "accuracy": accuracy,
    }
    return {figure["name"]: values[figure["measure"]] for figure in case["figures"]}


def loop_options(loop) -> poptorch.Options:
    """The options a ``poptorch_loop`` entry's tutorial gives its training model: one pipeline stage per block,
    each on its own IPU, ``deviceIterations``, ``gradientAccumulation``, ``outputMode`` and the optimizer's state
    on or off chip (off chip: streamed in and out around each weight update, ``ipu_teach.ipu.offloading``)."""
    opts = poptorch.Options()
    opts.deviceIterations(loop["device_iterations"])
    opts.setExecutionStrategy(
        poptorch.PipelinedExecution(*(poptorch.Stage(block).ipu(i) for i, block in enumerate(loop["stages"])))
    )
    opts.Training.gradientAccumulation(loop["gradient_accumulation"])
    opts.outputMode(getattr(poptorch.OutputMode, loop["output_mode"]))
    location = poptorch.TensorLocationSettings().useOnChipStorage(loop["optimizer_on_chip"])
    opts.TensorLocations.setOptimizerLocation(location)
    return opts


def simulate_loop(spec, samples_per_second, calls_simulated=2) -> dict:
    """``{"training compile": s, "epoch throughput": items/s}`` of a ``poptorch_loop`` entry: its trainingModel
    compiled and called on zeros (every call costs the same), then an epoch after the first of the tutorial's loop
    over its asynchronous DataLoader, whose ``workers`` each make a call's combined batch at ``samples_per_second``
    (one process's rate: ``ipu.host.asynchronous_epoch_seconds``)."""
    loop = spec["poptorch_loop"]
    system.reset()
    torch.manual_seed(0)  # as the tutorial's script
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        model = MODELS[spec["model"]]()
        training = poptorch.trainingModel(
            TrainingModelWithLoss(model), loop_options(loop), optimizer=_optimizer(model, spec["optimizer"])
        )
        combined = loop["batch"] * loop["device_iterations"] * loop["gradient_accumulation"]
        inputs = torch.zeros(combined, *IMAGE), torch.zeros(combined, dtype=torch.long)
        compile_s, per_call = _timed(training, *inputs, calls=calls_simulated)
    calls = loop["dataset_samples"] // combined  # poptorch.DataLoader drops the last incomplete batch
    workers = loop["loader"]["workers"]
    epoch = ipu.host.asynchronous_epoch_seconds(calls, per_call, combined / samples_per_second, workers)
    return {"training compile": compile_s, "epoch throughput": calls * combined / epoch}


def fashion_mnist(root="~/.torch/datasets"):
    """The tutorial's train and test sets (torchvision's folder, else Keras' cache), or None when neither has them."""
    transform = torchvision.transforms.Compose(
        [torchvision.transforms.ToTensor(), torchvision.transforms.Normalize((0.5,), (0.5,))]
    )
    try:
        return tuple(torchvision.datasets.FashionMNIST(root, transform=transform, train=t) for t in (True, False))
    except FileNotFoundError:
        return None


def train_and_evaluate(spec, train_dataset, test_dataset) -> float:
    """The tutorial's training loop (``epochs`` over the training set) and its evaluation; the accuracy (0-1)."""
    run = spec["poptorch_run"]
    with _tutorial_training(spec) as (model, opts, training):
        loader = poptorch.DataLoader(opts, train_dataset, batch_size=run["train_batch"], shuffle=True)
        for _ in range(run["epochs"]):
            for data, labels in loader:
                training(data, labels)
        training.detachFromDevice()
        model.eval()
        evaluation = poptorch.inferenceModel(model, options=opts)
        correct = total = 0
        for data, labels in poptorch.DataLoader(opts, test_dataset, batch_size=run["test_batch"]):
            correct += int((evaluation(data).argmax(dim=1) == labels).sum().item())
            total += len(labels)
        evaluation.detachFromDevice()
    return correct / total
