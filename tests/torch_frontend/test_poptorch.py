"""PopTorch's semantics on the simulated IPU: the combined batch, the reduction of gradients over accumulation
and replicas, what each OutputMode returns, shared weights, PopTorch's errors, and the cost of a call (the
"poptorch" host API, deviceIterations as steps per execution)."""

import copy

import numpy as np
import pytest
from torch_helpers import WithLoss

from ipu_teach import hardware, poptorch, torch
from ipu_teach.ipu import custom_loop


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal((n, 3)).astype(np.float32)), torch.from_numpy(
        rng.standard_normal((n, 2)).astype(np.float32)
    )


def _options(iterations=1, replicas=1, accumulation=1):
    opts = poptorch.Options().deviceIterations(iterations).replicationFactor(replicas)
    opts.Training.gradientAccumulation(accumulation)
    return opts


def _by_hand(model, x, y, iterations, per_update, lr, mean=True):
    """PopTorch's semantics written out: per weight update, the gradients of ``per_update`` micro-batches (in
    order), averaged (or summed), then one SGD step."""
    micro = len(x) // (iterations * per_update)
    for i in range(iterations):
        grads = [np.zeros_like(p.data) for p in model.parameters()]
        for j in range(per_update):
            part = slice((i * per_update + j) * micro, (i * per_update + j + 1) * micro)
            model.zero_grad()
            model(x[part], y[part])[1].backward()
            grads = [g + p.grad.numpy() for g, p in zip(grads, model.parameters())]
        with torch.no_grad():
            for p, g in zip(model.parameters(), grads):
                p.data -= lr * (g / per_update if mean else g)


@pytest.mark.parametrize("reduction", [poptorch.ReductionType.Mean, poptorch.ReductionType.Sum])
def test_gradients_reduce_over_accumulation_and_replicas(reduction, capsys):
    model = WithLoss()
    reference = copy.deepcopy(model)
    opts = _options(iterations=3, replicas=2, accumulation=2)
    opts.Training.accumulationAndReplicationReductionType(reduction)
    training = poptorch.trainingModel(model, opts, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    x, y = _data(3 * 2 * 2 * 4)
    training(x, y)
    _by_hand(reference, x, y, 3, 4, 0.1, mean=reduction == poptorch.ReductionType.Mean)
    for got, expected in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert "Graph compilation: 100%" in capsys.readouterr().err


def test_output_modes():
    x, y = _data(2 * 3 * 4)

    def outputs(mode, training=True, period=None):
        opts = _options(iterations=3, replicas=2).outputMode(mode, period)
        model = WithLoss()
        wrapped = poptorch.trainingModel(model, opts) if training else poptorch.inferenceModel(model.linear, opts)
        return wrapped(x, y) if training else wrapped(x)

    out, loss = outputs(poptorch.OutputMode.Final)
    assert out.shape == (8, 2) and loss.shape == (2,)  # the last iteration, one micro-batch per replica
    out, loss = outputs(poptorch.OutputMode.All)
    assert out.shape == (24, 2) and loss.shape == (6,)
    out, loss = outputs(poptorch.OutputMode.EveryN, period=3)
    assert out.shape == (8, 2) and loss.shape == (2,)
    out, loss = outputs(poptorch.OutputMode.Sum)
    assert out.shape == (8, 2) and loss.shape == (2,)
    assert outputs(poptorch.OutputMode.Default, training=False).shape == (24, 2)  # inference: All
    out, loss = poptorch.trainingModel(WithLoss())(*_data(4))
    assert out.shape == (4, 2) and loss.shape == ()  # training: Final


def test_sum_output_adds_the_iterations():
    model = WithLoss()
    x, y = _data(12)
    opts = _options(iterations=3).outputMode(poptorch.OutputMode.Sum)
    summed = poptorch.inferenceModel(model.linear, opts)(x)
    expected = sum(model.linear(x[i * 4 : (i + 1) * 4]).detach().numpy() for i in range(3))
    np.testing.assert_allclose(summed.numpy(), expected, rtol=1e-5)


def test_the_wrapped_model_shares_the_weights():
    model = WithLoss()
    before = model.linear.weight.detach().clone()
    training = poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.5))
    x, y = _data(4)
    training(x, y)
    assert not torch.equal(model.linear.weight, before)  # the original module was trained
    training.detachFromDevice()
    inference = poptorch.inferenceModel(model.linear)
    np.testing.assert_allclose(inference(x).numpy(), model.linear(x).detach().numpy(), rtol=1e-6)
    assert training.linear is model.linear  # attributes are the model's


def test_compile_leaves_the_weights_and_the_random_state():
    model = WithLoss()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    training = poptorch.trainingModel(model)
    training.compile(*_data(4))
    assert training.isCompiled() and all(torch.equal(state[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


def test_poptorch_errors():
    with pytest.raises(poptorch.Error, match=r"the batch dimension \(10\) must be a multiple of .*= 4"):
        poptorch.trainingModel(WithLoss(), _options(iterations=2, accumulation=2))(*_data(10))
    no_loss = poptorch.trainingModel(WithLoss().linear)
    with pytest.raises(poptorch.Error, match="Couldn't find a loss in graph!.*must compute the loss"):
        no_loss(_data(4)[0])
    with pytest.raises(poptorch.Error, match="gradientAccumulation to 1 .* when running a poptorch.inferenceModel"):
        poptorch.inferenceModel(WithLoss(), _options(accumulation=2))
    with pytest.raises(poptorch.Error, match="Expected poptorch.Options"):
        poptorch.trainingModel(WithLoss(), options={"deviceIterations": 2})
    training = poptorch.trainingModel(WithLoss())
    with pytest.raises(poptorch.Error, match="Model has not been compiled"):
        training.detachFromDevice()
    out, loss = training(*_data(4))
    with pytest.raises(poptorch.Error, match="backward\\(\\) cannot be called explicitly on outputs of a PopTorch"):
        loss.backward()
    training.detachFromDevice()
    with pytest.raises(poptorch.Error, match="Device is not attached"):
        training.detachFromDevice()
    training(*_data(4))  # a call attaches again, as PopTorch's
    assert training.isAttachedToDevice()

    class TwoLosses(WithLoss):
        def forward(self, x, y):
            out, loss = super().forward(x, y)
            return loss, loss * 2

    with pytest.raises(poptorch.Error, match="Multiple independent losses .* poptorch.identity_loss"):
        poptorch.trainingModel(TwoLosses())(*_data(4))


def test_identity_loss_marks_the_loss():
    class Custom(WithLoss):
        def forward(self, x, y):
            out = self.linear(x)
            return out.sum(), poptorch.identity_loss((out - y) ** 2, reduction="mean")

    model = Custom()
    before = model.linear.bias.detach().clone()
    poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))(*_data(4))
    assert not torch.equal(before, model.linear.bias)


def test_a_call_is_costed_with_the_poptorch_host_api_and_device_iterations_as_steps():
    seconds = {}
    for iterations in (1, 8):
        model = WithLoss()
        training = poptorch.trainingModel(model, _options(iterations=iterations))
        training(*_data(4 * iterations))
        executable = training._executable
        assert executable.steps_per_execution == iterations
        host = executable.seconds_per_execution - executable.timeline.seconds()
        assert host == pytest.approx(hardware.HOST.execution_seconds("poptorch"), rel=0.5)
        seconds[iterations] = executable.seconds_per_execution
    # eight iterations in one call pay the host's call once: less than eight calls of one
    assert seconds[8] < 8 * seconds[1]
    timing = custom_loop.timings()["poptorch.trainingModel(WithLoss)"]
    assert timing.calls == 2 and timing.steps == 9


def test_dataloader_serves_the_combined_batch():
    data = torch.utils.data.TensorDataset(*_data(100))
    loader = poptorch.DataLoader(_options(iterations=2, replicas=2, accumulation=3), data, batch_size=4)
    assert loader.combinedBatchSize == 48 and len(loader) == 2
    assert [x.shape[0] for x, _ in loader] == [48, 48]
    with pytest.raises(TypeError, match="options must be a poptorch.Options"):
        poptorch.DataLoader(data, batch_size=4)


def test_options_are_checked():
    with pytest.raises(ValueError, match="deviceIterations must be a positive integer"):
        poptorch.Options().deviceIterations(0)
    with pytest.raises(ValueError, match="must be set to poptorch.ReductionType.Mean or poptorch.ReductionType.Sum"):
        poptorch.Options().Training.accumulationAndReplicationReductionType(poptorch.ReductionType.NoReduction)
    with pytest.raises(ValueError, match="Invalid key: GPU0"):
        poptorch.Options().setAvailableMemoryProportion({"GPU0": 0.5})
    opts = poptorch.Options().setAvailableMemoryProportion({"IPU0": 0.3})
    opts.Precision.setPartialsType(torch.half)
    training = poptorch.trainingModel(WithLoss(), opts)
    training(*_data(4))
    assert training._configuration.matmul_options.available_memory_proportion == pytest.approx(0.3)


def test_autoreport_profiles_a_poptorch_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", '{"autoReport.all": "true", "autoReport.directory": "./report"}')
    training = poptorch.trainingModel(WithLoss(), _options(iterations=2))
    training(*_data(8))
    reports = list((tmp_path / "report").glob("*/profile.json"))
    assert len(reports) == 1 and reports[0].parent.name.startswith("poptorch.trainingModel_WithLoss")
    assert "linear" in training._executable.explain()  # the ops are named after the modules


def test_blocks_and_replicas_attach_their_ipus():
    model = WithLoss()
    poptorch.BeginBlock(model.loss, ipu_id=1)
    training = poptorch.trainingModel(model, _options(replicas=2, accumulation=4))  # a 2-stage pipeline needs 3+
    training(*_data(16))
    assert training._configuration.num_ipus == 4  # 2 replicas of 2 IPUs


def test_set_optimizer_takes_effect_on_the_next_call():
    model = WithLoss()
    training = poptorch.trainingModel(model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    x, y = _data(4)
    training(x, y)
    before = model.linear.weight.detach().clone()
    training.setOptimizer(torch.optim.SGD(model.parameters(), lr=0.0))
    training(x, y)
    assert torch.equal(model.linear.weight, before)
    with pytest.raises(poptorch.Error, match="the optimizer's parameters must be the wrapped model's"):
        training.setOptimizer(torch.optim.SGD(WithLoss().parameters(), lr=0.1))


def test_executable_caching_loads_a_second_identical_model(tmp_path):
    opts = poptorch.Options().enableExecutableCaching(str(tmp_path / "cache"))
    first = poptorch.trainingModel(WithLoss(), opts)
    first(*_data(4))
    second = poptorch.trainingModel(WithLoss(), opts)
    second(*_data(4))
    assert not first._executable.from_cache and second._executable.from_cache
    assert custom_loop.timings()["poptorch.trainingModel(WithLoss)"].compile_seconds == pytest.approx(
        first._executable.compile_seconds + hardware.HOST.executable_load_s
    )


def test_a_wrapped_model_can_be_copied():
    wrapped = poptorch.inferenceModel(torch.nn.Linear(2, 3))
    assert copy.copy(wrapped).out_features == 3  # attribute lookups reach the model only once it is set


def test_random_seed_seeds_torch_as_poptorch_does():
    poptorch.Options().randomSeed(7)
    first = torch.randn(3)
    poptorch.Options().randomSeed(7)
    assert torch.equal(first, torch.randn(3))


def test_popart_options_are_recorded_and_chain():
    """``opts._Popart.set(key, value)`` (the pipelining tutorial sets defaultPrefetchBufferingDepth) is kept with
    the options and survives ``clone()``, as PopTorch's _PopartOptions."""
    opts = poptorch.Options()
    assert opts._Popart.set("defaultPrefetchBufferingDepth", 3) is opts._Popart
    opts._Popart.setPatterns({"TiedGather": True}, level=1)
    copied = opts.clone()
    assert copied._Popart.options == {
        "defaultPrefetchBufferingDepth": 3,
        "patternsLevel": 1,
        "patterns": {"TiedGather": True},
    }
    assert copied._Popart is not opts._Popart


def test_tensor_locations_are_recorded_and_checked_as_poptorch_checks_them():
    """``opts.TensorLocations`` (the pipelining tutorial's --offload-optimiser) keeps each kind's settings, survives
    ``clone()`` and refuses what PopTorch refuses."""
    opts = poptorch.Options()
    offchip = poptorch.TensorLocationSettings().useOnChipStorage(False).minElementsForOffChip(64)
    opts.TensorLocations.setOptimizerLocation(offchip).setWeightLocation(
        poptorch.TensorLocationSettings().useOnChipStorage(True)
    )
    assert opts.clone().TensorLocations.locations == {
        "optimizer": {"onChip": False, "minElementsForOffChip": 64},
        "weight": {"onChip": True},
    }
    with pytest.raises(TypeError, match="expected a poptorch.TensorLocationSettings, got dict"):
        opts.TensorLocations.setActivationLocation({"onChip": True})
    with pytest.raises(TypeError, match="useOnChipStorage expects a bool, got 1"):
        poptorch.TensorLocationSettings().useOnChipStorage(1)
    with pytest.raises(ValueError, match="numIOTiles must be an even number between 32 and 192, got 33"):
        opts.TensorLocations.numIOTiles(33)
    assert opts.TensorLocations.numIOTiles(64).num_io_tiles == 64


def test_set_log_level_takes_poptorchs_names_and_legacy_integers():
    import logging

    logger = logging.getLogger("poptorch")
    saved = logger.level
    try:
        poptorch.setLogLevel(1)  # the pipelining tutorial's --debug
        assert logger.level == logging.DEBUG
        poptorch.setLogLevel("WARN")
        assert logger.level == logging.WARNING
        with pytest.raises(ValueError, match="Unknown log level: LOUD. Valid values are DEBUG, DEBUG_IR, ERR, INFO"):
            poptorch.setLogLevel("LOUD")
        with pytest.raises(ValueError, match="Invalid log level integer"):
            poptorch.setLogLevel(5)
    finally:
        logger.setLevel(saved)
