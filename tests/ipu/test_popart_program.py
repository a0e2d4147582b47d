"""The program PopART builds for a PopTorch front end (issue 20): its optimizer's ops per weight, as PopART's
SGD0Decompose / SGD2Decompose and their opxs emit them, reach the lowering from both roads to a PopTorch program
(ipu_teach.poptorch, and a Keras model called through the "poptorch" host API as bench_fidelity's cases are),
and nothing else changes."""

import sys
from pathlib import Path

import numpy as np
import pytest
from ipu_test_helpers import FEATURES, build, configure, data

import ipu_teach.keras as keras
from ipu_teach import hardware as ipu_teach_hardware
from ipu_teach import ipu, poptorch, torch
from ipu_teach.ipu import popart_program
from ipu_teach.ipu.executor import IPUExecutor

BATCH = 16


def _executable(host_api, optimizer, accumulation=None, program_builder=None):
    """A two-Dense model trained one execution through ``host_api`` (its program built by ``program_builder``); its
    executable."""
    configure()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build()
        if accumulation:
            model.set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=accumulation)
        model.compile(optimizer, "categorical_crossentropy", steps_per_execution=accumulation or 1)
        model.device_executor = IPUExecutor(model, host_api=host_api, program_builder=program_builder)
        x, y = data(BATCH * (accumulation or 1))
        model.fit(x, y, batch_size=BATCH, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def _update_names(executable):
    return [step.name for step in executable.graph.update]


def test_the_front_end_decides_who_builds_the_program():
    assert {api: popart_program.builder_for(api) for api in ("keras", "custom_loop", "poptorch")} == {
        "keras": "tensorflow",
        "custom_loop": "tensorflow",
        "poptorch": "popart",
    }
    with pytest.raises(ValueError, match=r"host API 'popxl' is not one of \('keras', 'custom_loop', 'poptorch'\)"):
        popart_program.builder_for("popxl")
    assert popart_program.builder_for("poptorch", "popxl") == "popxl"
    with pytest.raises(ValueError, match=r"program builder 'onnx' is not one of \('tensorflow', 'popart', 'popxl'\)"):
        IPUExecutor(None, host_api="poptorch", program_builder="onnx")


def test_sgd_decomposes_as_popart_does():
    plain = popart_program.weight_update_passes(keras.optimizers.SGD(0.1))
    assert [p.name for p in plain] == [
        "SGD0VarUpdate/nonConstWeightDecay",
        "SGD0VarUpdate/neg",
        "SGD0VarUpdate/nonConstScaledSubtract",
    ]
    assert [p.over_weight for p in plain] == [True, False, True]  # the learning rate is negated once, one value
    momentum = popart_program.weight_update_passes(keras.optimizers.SGD(0.1, momentum=0.9))
    assert [p.name.split("/")[0] for p in momentum] == [
        "SGD1AcclUpdate",
        "Accumulate",
        "SGD1VarUpdate",
        "SGD1VarUpdate",
    ]
    # non-constant optimizer values (momentum, learning rate) are tensors each tile of the weight receives
    assert [p.tensor_scale for p in momentum] == [True, False, False, True]
    with_accumulation = popart_program.weight_update_passes(keras.optimizers.SGD(0.1), accumulation=4)
    assert with_accumulation[-1].name == "AccumulatorZero/zero" and with_accumulation[:-1] == plain
    assert popart_program.weight_update_passes(keras.optimizers.RMSprop()) is None  # not modelled: TensorFlow's op


def test_adam_and_adamw_decompose_as_popart_does():
    """PopART's AdamDecompose: the gradient unscaled, L2 regularisation for torch's Adam only, the two moments as
    fused maps, AdamUpdater's step and its one map (AdamW's decay adds the weight as a third input and two ops),
    then the learning rate negated on one value and the scaled update."""
    adamw = popart_program.adam_update_passes(0.01, decoupled=True, accumulation=10)
    assert [p.name for p in adamw] == [
        "Scale/gradUnscale",
        "Accumulate/constMovingAverage",
        "Accumulate/constMovingAverageSquare",
        "AccumulatorZero/zero",
        "AdamUpdater/updateStep",
        "AdamUpdater/map",
        "AdamVarUpdate/leaningRate",
        "AdamVarUpdate/varUpdate",
    ]
    assert [p.fused for p in adamw] == [1, 3 * 2, 4 * 2, 1, 1, 11 * 3, 1, 1]
    assert [p.over_weight for p in adamw].count(False) == 2  # the step and the learning rate: one value each
    assert [p.tensor_scale for p in adamw] == [False] * 7 + [True]  # the learning rate is never a constant
    adam = popart_program.adam_update_passes(0.0, decoupled=False)  # torch's Adam: L2 regularisation, even of 0
    assert [p.name for p in adam][:2] == ["Scale/gradUnscale", "ScaledAdd/weightDecayScale"]
    assert "AccumulatorZero/zero" not in [p.name for p in adam]  # no gradient accumulation
    assert next(p.fused for p in adam if p.name == "AdamUpdater/map") == 9 * 2  # no decay in the updater
    no_decay = popart_program.adam_update_passes(0.0, decoupled=True)
    assert next(p.fused for p in no_decay if p.name == "AdamUpdater/map") == 9 * 2
    # a Keras Adam stands for torch's Adam (no weight decay); PopTorch's front end says when it is an AdamW
    assert popart_program.weight_update_passes(keras.optimizers.Adam()) == adam
    keras_adamw = keras.optimizers.Adam()
    keras_adamw.weight_decay, keras_adamw.decoupled_weight_decay = 0.01, True
    assert popart_program.weight_update_passes(keras_adamw, accumulation=10) == adamw


@pytest.mark.parametrize("momentum, passes", [(0.0, 3), (0.9, 4)])
def test_a_poptorch_program_updates_each_weight_with_popart_ops(momentum, passes):
    keras_program = _executable("keras", keras.optimizers.SGD(0.1, momentum=momentum))
    popart = _executable("poptorch", keras.optimizers.SGD(0.1, momentum=momentum))
    weights = len(keras_program.graph.update)
    assert weights == 4  # two kernels, two biases: one update op each in Graphcore's TensorFlow
    assert len(popart.graph.update) == passes * weights
    identity = sum(len(part) for part in popart_program.identity_loss_work())  # the loss's IdentityLoss, 1 + 3
    assert popart.graph.compute_sets == keras_program.graph.compute_sets + (passes - 1) * weights + identity
    expected = popart_program.weight_update_passes(keras.optimizers.SGD(0.1, momentum=momentum))
    assert _update_names(popart)[:passes] == [f"dense/kernel/{p.name}" for p in expected]
    # the forward and backward passes are the same ops but for the IdentityLoss; the update differs
    assert [s.name for s in popart.graph.forward + popart.graph.backward if "IdentityLoss" not in s.name] == [
        s.name for s in keras_program.graph.forward + keras_program.graph.backward
    ]
    kernel = {s.name.split("/", 2)[2]: s for s in popart.graph.update[:passes]}
    negate = kernel[expected[[p.over_weight for p in expected].index(False)].name]
    assert np.count_nonzero(negate.cycles) == 1  # one value on one tile
    scaled = kernel[expected[-1].name]
    working = scaled.cycles > 0
    # the learning rate (one float) sent to each tile of the weight, with the gradient where this pass reads it first
    gradient = scaled.received - 4 * working
    assert (gradient[working] > 0).all() if expected[-1].reads_gradient else not gradient.any()
    # the extra compute sets cost their syncs and vertices: the device takes longer, the code grows
    assert popart.timeline.total_cycles() > keras_program.timeline.total_cycles()


@pytest.mark.parametrize("host_api, program_builder", [("keras", None), ("custom_loop", None), ("poptorch", "popxl")])
def test_other_programs_keep_one_update_op_per_weight(host_api, program_builder):
    """Keras and custom-loop programs keep Graphcore's TensorFlow's one update op per weight, and so does a PopXL
    program called as PopTorch calls are (its update is written by hand: one ops.scaled_add_ per weight)."""
    executable = _executable(host_api, keras.optimizers.SGD(0.1, momentum=0.9), program_builder=program_builder)
    expected = ["dense/kernel/update", "dense/bias/update", "dense_1/kernel/update", "dense_1/bias/update"]
    assert _update_names(executable) == expected


def test_accumulation_zeroes_each_accumulator():
    executable = _executable("poptorch", keras.optimizers.SGD(0.1), accumulation=2)
    zeroed = [name for name in _update_names(executable) if name.endswith("AccumulatorZero/zero")]
    assert len(zeroed) == 4


def test_offloaded_state_is_live_during_its_weights_popart_update(monkeypatch):
    """Offloading the optimizer state with PopART's several steps per weight: each weight's state is loaded before
    its first step and live until its last."""
    from ipu_teach.ipu import offloading

    monkeypatch.setattr(offloading, "optimizer_state_offloaded", lambda *args: True)
    executable = _executable("poptorch", keras.optimizers.SGD(0.1, momentum=0.9), accumulation=2)
    graph = executable.graph
    passes = 5  # SGD2's four and the accumulator's zeroing
    first = len(graph.forward) + len(graph.backward) + 4  # after the four accumulations
    state = [m for m in graph.memory if m.category == "optimizer state"]
    assert [m.live for m in state] == [(first + i * passes, first + i * passes + passes - 1) for i in range(4)]
    streamed = [s.name for s in graph.update if s.streamed_bytes]
    assert len(streamed) == 4 and all(name.endswith("SGD1AcclUpdate/nonConstMomentumScaling") for name in streamed)


class _Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear, self.loss = torch.nn.Linear(FEATURES, 3), torch.nn.CrossEntropyLoss()

    def forward(self, x, y):
        out = self.linear(x)
        return out, self.loss(out, y)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_poptorch_training_models_are_built_by_popart(momentum):
    model = _Classifier()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=momentum)
    training = poptorch.trainingModel(model, poptorch.Options(), optimizer=optimizer)
    x = torch.from_numpy(np.zeros((BATCH, FEATURES), np.float32))
    training(x, torch.from_numpy(np.zeros(BATCH, np.int64)))
    expected = popart_program.weight_update_passes(keras.optimizers.SGD(momentum=momentum))
    names = _update_names(training.get_ipu_executable())
    assert len(names) == 2 * len(expected)  # the weight and the bias
    assert names[: len(expected)] == [f"linear/weight/{p.name}" for p in expected]


def test_the_fidelity_cases_poptorch_programs_are_popart_programs():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import fidelity_cases

    case = next(c for c in fidelity_cases.load() if c["id"] == "poptorch-basics-bow-training")
    assert case["ipu_teach"]["host_api"] == "poptorch"
    spec = dict(case["ipu_teach"], input_pipeline=None)
    names = _update_names(fidelity_cases.compile_case(spec))
    assert "dense/kernel/SGD1VarUpdate/neg" in names and "dense/kernel/update" not in names
    popxl = next(c for c in fidelity_cases.load() if c["id"] == "popxl-mnist-sgd")["ipu_teach"]
    assert popxl["host_api"] == "poptorch" and popxl["program_builder"] == "popxl"
    bad = dict(popxl, program_builder="popart2")
    assert any("program_builder 'popart2' is not one of" in p for p in fidelity_cases._loop_problems(bad))


def test_popart_nll_masks_the_ignored_label_and_counts_the_samples_left():
    forward, backward = popart_program.nll_ignore_index_work(16, 10)
    assert [name for name, _ in forward] == [
        "Nll/notEqual",
        "Nll/cast",
        "Nll/masked",
        "Nll/notEqual2",
        "Nll/cast2",
        "Nll/masked2",
        "Nll/numNonIgnoredSamples",
        "Nll/numNonIgnoredSamples_min",
        "Nll/combinedLossScale",
        "Nll/mean",
    ]
    assert [name for name, _ in backward] == [name.replace("Nll/", "NllGrad/") for name, _ in forward[:3] + forward[6:]]
    sizes = {name: work.elements for name, work in forward + backward}
    assert sizes["Nll/masked"] == 16 and sizes["NllGrad/masked"] == 160  # the gradient is masked for every class
    assert sizes["Nll/combinedLossScale"] == 1 and sizes["NllGrad/mean"] == 160


def _sparse_executable(host_api, loss="sparse_categorical_crossentropy"):
    configure()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build()
        model.compile(keras.optimizers.SGD(0.1), loss)
        model.device_executor = IPUExecutor(model, host_api=host_api)
        x, y = data(BATCH)
        labels = y.argmax(axis=1).astype(np.int32) if loss.startswith("sparse") else y
        model.fit(x, labels, batch_size=BATCH, epochs=1, verbose=0)
    return model.get_ipu_executable("train").graph


def test_a_poptorch_programs_class_label_loss_is_popart_nll():
    popart, tensorflow = _sparse_executable("poptorch"), _sparse_executable("keras")
    forward_names = [s.name for s in popart.forward]
    loss_op = next(s.name for s in tensorflow.forward if "SparseSoftmaxCrossEntropy" in s.name).split("/")[0:2]
    nll = [n for n in forward_names if "/Nll/" in n]
    assert nll[0] == "/".join(loss_op) + "/Nll/notEqual"
    first = forward_names.index(nll[0])  # right after the loss op's own compute sets, all together
    assert forward_names[first - 1].startswith("/".join(loss_op)) and forward_names[first : first + len(nll)] == nll
    assert not [s for s in tensorflow.steps if "Nll" in s.name]
    forward, backward = popart_program.nll_ignore_index_work(BATCH, 3)
    # a reduction of the mask is its own compute sets (one per stage); every other pass is one
    assert len(nll) >= len(forward) and len([s for s in popart.backward if "/NllGrad/" in s.name]) >= len(backward)
    # an MSE loss is not PopART's Nll
    assert not [s for s in _sparse_executable("poptorch", "mse").steps if "Nll" in s.name]


def test_poptorch_cross_entropy_is_popart_nll():
    model = _Classifier()
    training = poptorch.trainingModel(model, poptorch.Options(), optimizer=torch.optim.SGD(model.parameters(), lr=0.05))
    x = torch.from_numpy(np.zeros((BATCH, FEATURES), np.float32))
    training(x, torch.from_numpy(np.zeros(BATCH, np.int64)))
    graph = training.get_ipu_executable().graph
    assert any(s.name.endswith("/Nll/combinedLossScale") for s in graph.forward)
    assert any(s.name.endswith("/NllGrad/mean") for s in graph.backward)


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy", "mse"])
def test_every_poptorch_loss_ends_with_popart_identity_loss(loss):
    graph = _sparse_executable("poptorch", loss)
    forward, backward = popart_program.identity_loss_work()
    last_op = [s for s in graph.forward if not s.name.startswith("metrics/")]
    assert [s.name.split("/", 2)[2] for s in last_op[-len(forward) :]] == [name for name, _ in forward]
    # the backward pass starts from the loss: IdentityLossGrad's division, zeroing and addition first
    assert [s.name.split("/", 3)[3] for s in graph.backward[: len(backward)]] == [name for name, _ in backward]
    assert not [s for s in _sparse_executable("keras", loss).steps if "IdentityLoss" in s.name]


def _adamw_training(opts, weight_decay=0.01):
    model = _Classifier()
    optimizer = poptorch.optim.AdamW(model.parameters(), lr=0.001, weight_decay=weight_decay)
    training = poptorch.trainingModel(model, opts, optimizer=optimizer)
    n = BATCH * opts.Training.gradient_accumulation
    training(torch.from_numpy(np.zeros((n, FEATURES), np.float32)), torch.from_numpy(np.zeros(n, np.int64)))
    return training.get_ipu_executable()


def test_a_poptorch_adamw_updates_each_weight_as_popart_and_costs_its_fused_maps():
    """poptorch.optim.AdamW reaches the lowering as PopART's AdamW, and a fused map costs its ops over its inputs
    per element (Poplar's estimate of the vertex popops generates), on one vertex's fixed cost."""
    executable = _adamw_training(poptorch.Options())
    expected = popart_program.adam_update_passes(0.01, decoupled=True)
    names = _update_names(executable)
    assert names[: len(expected)] == [f"linear/weight/{p.name}" for p in expected]
    assert len(names) == 2 * len(expected)  # the weight and the bias
    steps = {s.name.split("/", 2)[2]: s for s in executable.graph.update[: len(expected)]}
    scale, fused = steps["Scale/gradUnscale"], steps["AdamUpdater/map"]
    working = scale.cycles > 0
    assert (fused.cycles > 0).tolist() == working.tolist()  # the same tiles: the weight's
    vertex = ipu_teach_hardware.VECTOR.elementwise_vertex_cycles
    elements = (scale.cycles[working] - vertex) / ipu_teach_hardware.VECTOR.cycles_per_element("add")
    per_element = ipu_teach_hardware.VECTOR.cycles_per_element("map_expression_op")
    assert fused.cycles[working].tolist() == (np.ceil(elements * per_element) * 11 * 3 + vertex).tolist()
    # torch's own AdamW is the same optimizer to PopTorch
    model = _Classifier()
    plain = poptorch.trainingModel(model, poptorch.Options(), optimizer=torch.optim.AdamW(model.parameters()))
    plain(torch.from_numpy(np.zeros((BATCH, FEATURES), np.float32)), torch.from_numpy(np.zeros(BATCH, np.int64)))
    assert _update_names(plain.get_ipu_executable()) == names


@pytest.mark.parametrize("on_chip", [True, False])
def test_the_optimizer_state_off_chip_is_streamed_around_each_weight_update(on_chip):
    """``TensorLocations.setOptimizerLocation(useOnChipStorage(False))`` puts the optimizer state in streaming
    memory: with gradient accumulation each weight's update first loads its two moments and stores them after
    (PopART's RemoteLoad / RemoteStore), so the update takes longer and the state is live only there."""
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(2)
    opts.TensorLocations.setOptimizerLocation(poptorch.TensorLocationSettings().useOnChipStorage(on_chip))
    graph = _adamw_training(opts).graph
    streamed = [(s.name, s.streamed_bytes) for s in graph.update if s.streamed_bytes]
    state = [m for m in graph.memory if m.category == "optimizer state"]
    assert len(state) == 4  # m and v of the weight and of the bias
    if on_chip:
        assert streamed == [] and all(m.always_live for m in state)
        return
    # m and v of the weight (3 x FEATURES floats) and of the bias (3 floats), loaded before each first step
    assert streamed == [
        ("linear/weight/Scale/gradUnscale", 2 * 3 * FEATURES * 4),
        ("linear/bias/Scale/gradUnscale", 2 * 3 * 4),
    ]
    assert not any(m.always_live for m in state)  # live during its weight's update only
