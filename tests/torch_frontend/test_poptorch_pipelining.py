"""PopTorch's blocks costed as a pipeline on the simulated IPU: the same model pipelined with Keras' PipelineStage and
with PopTorch's BeginBlock costs the same; PopTorch's rules and errors for stages, IPUs and the pipeline's depth;
ShardedExecution as one stage at a time; the explorer and profiles on a PopTorch model."""

import dataclasses

import numpy as np
import pytest

from ipu_teach import bsp, ipu, keras, poptorch, torch
from ipu_teach.examples import configure_ipus
from ipu_teach.widgets.pipeline import PipelineExplorer

B = 4  # micro-batch


class Dense(torch.nn.Module):
    """Keras' Dense written in torch (``x @ kernel + bias``), so both front ends record the same ops."""

    def __init__(self, n_in, n_out, relu):
        super().__init__()
        self.kernel = torch.nn.Parameter(torch.zeros(n_in, n_out))
        self.bias = torch.nn.Parameter(torch.zeros(n_out))
        self.relu = relu

    def forward(self, x):
        y = x @ self.kernel + self.bias
        return torch.relu(y) if self.relu else y


class TwoDense(torch.nn.Module):
    """Dense(8, relu) then Dense(2) with Keras' mean squared error as the loss."""

    def __init__(self, second_ipu=1):
        super().__init__()
        self.dense = Dense(4, 8, True)
        self.dense_1 = Dense(8, 2, False)
        if second_ipu is not None:
            poptorch.BeginBlock(self.dense_1, ipu_id=second_ipu)

    def forward(self, x, y):
        d = self.dense_1(self.dense(x)) - y
        return (d * d).mean(dim=1).mean()


class Linears(torch.nn.Module):
    def __init__(self, n=4):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(n)])
        self.loss = torch.nn.MSELoss()

    def forward(self, x, y):
        for layer in self.layers:
            x = layer(x)
        return x, self.loss(x, y)


def _data(n, width=4, out=2):
    rng = np.random.default_rng(0)
    return (
        torch.from_numpy(rng.standard_normal((n, width)).astype(np.float32)),
        torch.from_numpy(rng.standard_normal((n, out)).astype(np.float32)),
    )


def _training(model, accumulation=8, iterations=1, strategy=None, output=poptorch.OutputMode.All):
    opts = poptorch.Options().deviceIterations(iterations).outputMode(output)
    opts.Training.gradientAccumulation(accumulation)
    if strategy is not None:
        opts.setExecutionStrategy(strategy)
    return poptorch.trainingModel(model, opts, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


def test_keras_pipeline_stages_and_poptorch_blocks_share_a_schedule_and_differ_by_poptorchs_ops():
    accumulation = 8
    x, y = _data(B * accumulation)
    training = _training(TwoDense(), accumulation)  # OutputMode.All: the loss of every micro-batch, as Keras' outfeed
    training(x, y)
    popt = training.get_ipu_executable()

    configure_ipus(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(4,))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Dense(8, activation="relu")(inputs)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(2)(hidden)
        model = keras.Model(inputs, outputs)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=accumulation)
        model.compile("sgd", "mse", steps_per_execution=accumulation)
        model.fit(x.numpy(), y.numpy(), batch_size=B, verbose=0)
    kera = model.get_ipu_executable("train")

    # each stage's forward, backward, update and transfer; Keras' last stage also computes its loss metric, which
    # Graphcore's Keras compiles into the step (PopTorch returns the loss, and the host averages it)
    last = kera.pipeline.stage_graphs[-1]
    metric_steps = [step.program() for step in last.steps if step.name.startswith("metrics/")]
    metric_seconds = bsp.CostEngine(bsp.Sequence(metric_steps), last.spec).run().seconds()
    # PopART builds the PopTorch program (ipu.popart_program): its loss ends with PopTorch's IdentityLoss (a compute
    # set forward, three backward, in the last stage), and each weight's update is its SGD0VarUpdate's three popops
    # calls and the accumulator's zeroing, where Graphcore's TensorFlow runs one update op
    identity = {
        phase: bsp.CostEngine(
            bsp.Sequence(
                [
                    s.program()
                    for s in popt.pipeline.stage_graphs[-1].steps
                    if "IdentityLoss" in s.name and s.phase == phase
                ]
            ),
            last.spec,
        )
        .run()
        .seconds()
        for phase in ("forward", "backward")
    }

    # Graphcore's TensorFlow fuses a Dense layer's bias add with its product, the bias laid out on the product's
    # output (matmul_biasadd): a tile receives only the bias other tiles hold; PopART adds a Linear's bias with a plain
    # Add, its bias mapped elsewhere, so each tile receives all it adds
    def bias_add_seconds(executable, stage):
        graph = executable.pipeline.stage_graphs[stage]
        adds = [s for s in graph.steps if s.phase == "forward" and s.name.split("/")[1].startswith("Add:")]
        assert len(adds) == 1
        return adds[0], bsp.CostEngine(bsp.Sequence([adds[0].program()]), graph.spec).run().seconds()

    bias = {}
    for stage in (0, 1):
        (fused, fused_seconds), (plain, plain_seconds) = (bias_add_seconds(e, stage) for e in (kera, popt))
        assert fused.received.sum() < plain.received.sum() and np.array_equal(fused.cycles, plain.cycles)
        bias[stage] = plain_seconds - fused_seconds
    assert metric_steps and popt.pipeline.costs.forward[0] == pytest.approx(
        kera.pipeline.costs.forward[0] + bias[0], rel=1e-12
    )
    assert popt.pipeline.costs.forward[1] == pytest.approx(
        kera.pipeline.costs.forward[1] - metric_seconds + identity["forward"] + bias[1], rel=1e-12
    )
    assert popt.pipeline.costs.backward[1] == pytest.approx(
        kera.pipeline.costs.backward[1] + identity["backward"], rel=1e-12
    )
    assert popt.pipeline.costs.backward[0] == kera.pipeline.costs.backward[0]
    costs = kera.pipeline.costs
    same = dict(forward=costs.forward, backward=costs.backward, weight_update=costs.weight_update)
    assert dataclasses.replace(popt.pipeline.costs, **same) == kera.pipeline.costs
    assert all(p > k for p, k in zip(popt.pipeline.costs.weight_update, kera.pipeline.costs.weight_update))
    updates = [s.name for s in popt.pipeline.stage_graphs[0].update if s.phase == "update"]
    assert len(updates) == 4 * len([s for s in kera.pipeline.stage_graphs[0].update if s.phase == "update"])
    for column in ("stage", "kind", "micro_batch", "slot"):
        assert np.array_equal(getattr(popt.pipeline.schedule, column), getattr(kera.pipeline.schedule, column))
    assert popt.pipeline.schedule.device_mapping == kera.pipeline.schedule.device_mapping == (0, 1)
    assert popt.pipeline.schedule.name == "PopTorch" and kera.pipeline.schedule.name == "Grouped"
    assert "pipelined (PopTorch)" in popt.explain().splitlines()[0]


def test_pipelining_changes_the_time_not_the_numbers():
    x, y = _data(B * 8, 3, 3)
    torch.manual_seed(0)
    plain = Linears()
    torch.manual_seed(0)
    piped = Linears()
    poptorch.BeginBlock(piped.layers[2], ipu_id=1)
    _training(plain)(x, y)
    training = _training(piped)
    training(x, y)
    for a, b in zip(plain.parameters(), piped.parameters()):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    plan = training.get_ipu_executable().pipeline
    assert plan.schedule.stages == 2 and training._configuration.num_ipus == 2
    assert plan.schedule.micro_batches == 8  # gradientAccumulation is the pipeline's micro-batches


def test_the_poptorch_schedule_takes_any_accumulation_of_at_least_2n_minus_1():
    model = Linears()
    for i in (1, 2, 3):
        poptorch.BeginBlock(model.layers[i], ipu_id=i)
    x, y = _data(B * 7, 3, 3)
    training = _training(model, accumulation=7)  # Grouped in Keras would need a multiple of 8
    training(x, y)
    assert training.get_ipu_executable().pipeline.schedule.micro_batches == 7
    with pytest.raises(
        poptorch.Error,
        match=r"gradientAccumulation must be greater than or equal to the number of pipeline stages \(7\) when using "
        r"poptorch\.PipelinedExecution\. Please note that a model with 4 pipeline stages in PopTorch will have an "
        r"additional 3 stages when training\.",
    ):
        _training(model, accumulation=6)(*_data(B * 6, 3, 3))


def test_inference_needs_device_iterations_for_every_stage():
    model = Linears(2)
    poptorch.BeginBlock(model.layers[1], ipu_id=1)
    inference = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(1))
    with pytest.raises(
        poptorch.Error, match=r"deviceIterations must be greater than or equal to the number of pipeline"
    ):
        inference(*_data(B, 3, 3))
    inference = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(4))
    out, _ = inference(*_data(4 * B, 3, 3))
    assert out.shape == (4 * B, 3)
    assert inference.get_ipu_executable("predict").pipeline.schedule.micro_batches == 4
    with pytest.raises(ValueError, match="has only a 'predict' executable, not 'train'"):
        inference.get_ipu_executable("train")
    opts = poptorch.Options()
    opts.Training.gradientAccumulation(2)
    with pytest.raises(poptorch.Error, match="Use poptorch.Options\\(\\).deviceIterations to process a sufficient"):
        poptorch.inferenceModel(model, opts)
    with pytest.raises(poptorch.Error, match=r"inferenceModel\(\)\.$"):
        poptorch.inferenceModel(model, opts.setExecutionStrategy(poptorch.ShardedExecution()))


def test_sharded_execution_runs_one_stage_at_a_time():
    model = Linears()
    poptorch.BeginBlock(model.layers[2], ipu_id=1)
    x, y = _data(B * 4, 3, 3)
    sharded = _training(model, accumulation=1, iterations=4, strategy=poptorch.ShardedExecution())
    sharded(x, y)  # no depth rule: one micro-batch per weight update
    schedule = sharded.get_ipu_executable().pipeline.schedule
    assert schedule.name == "Sequential"
    assert len(np.unique(schedule.slot)) == len(schedule.slot)  # every action alone in its step: no overlap
    piped = _training(model, accumulation=4)
    piped(x, y)
    sharded4 = _training(model, accumulation=4, strategy=poptorch.ShardedExecution())
    sharded4(x, y)
    # the same micro-batches and one update: a pipeline overlaps its stages, sharding does not
    assert sharded4.get_ipu_executable().timeline.seconds() > piped.get_ipu_executable().timeline.seconds()


def test_stages_from_blocks_and_strategies():
    class Tutorial(torch.nn.Module):
        """Graphcore's pipelining tutorial's layout: named blocks, the loss back in block "B3"."""

        def __init__(self):
            super().__init__()
            self.a, self.b, self.c = torch.nn.Linear(3, 3), torch.nn.Linear(3, 3), torch.nn.Linear(3, 3)

        def forward(self, x, y):
            with poptorch.Block("B1"):
                x = self.a(x)
            with poptorch.Block("B2"):
                x = self.b(x)
            with poptorch.Block("B3"):
                x = self.c(x)
            with poptorch.Block("B3"):
                loss = torch.nn.functional.mse_loss(x, y)
            return x, loss

    x, y = _data(B * 8, 3, 3)
    strategy = poptorch.PipelinedExecution(
        poptorch.Stage("B1").ipu(0), poptorch.Stage("B2").ipu(1), poptorch.Stage("B3").ipu(1)
    )
    training = _training(Tutorial(), strategy=strategy)
    training(x, y)
    plan = training.get_ipu_executable().pipeline
    assert plan.schedule.device_mapping == (0, 1)  # B2 and B3 on IPU 1: one stage ("PopTorch will merge them")
    with pytest.raises(AssertionError, match=r"Unknown Block 'B3' list of expected Blocks: \['B1', 'B2'\]"):
        _training(Tutorial(), strategy=poptorch.PipelinedExecution("B1", "B2"))(x, y)
    with pytest.raises(AssertionError, match="SameAsIpu was selected but no IPU was specified for block B1"):
        _training(Tutorial())(x, y)
    with pytest.raises(AssertionError, match="B1 associated with more than one stage"):
        poptorch.PipelinedExecution("B1", ["B2", "B1"])


def test_coming_back_to_an_ipu_needs_auto_increment():
    model = Linears(3)
    poptorch.BeginBlock(model.layers[1], ipu_id=1)
    poptorch.BeginBlock(model.layers[2], ipu_id=0)
    x, y = _data(B * 8, 3, 3)
    with pytest.raises(poptorch.Error, match="Pipeline stages out of order: block '1' \\(stage 0, IPU 0\\)"):
        _training(model)(x, y)
    training = _training(model, strategy=poptorch.PipelinedExecution(poptorch.AutoStage.AutoIncrement))
    training(x, y)
    assert training.get_ipu_executable().pipeline.schedule.device_mapping == (0, 1, 0)
    # the model's own ops after the blocks (its loss) are costed in the last stage, under their own name
    assert training.get_ipu_executable().pipeline.stage_graphs[2].forward[-1].scope == "loss"


def test_ops_of_one_module_in_two_stages_are_costed_in_each():
    class Inline(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 3), poptorch.BeginBlock(torch.nn.Linear(3, 3), ipu_id=1)

        def forward(self, x, y):
            x = self.b(torch.tanh(self.a(x)))
            return x, ((torch.tanh(x) - y) ** 2).mean()

    training = _training(Inline(), accumulation=4)
    training(*_data(B * 4, 3, 3))
    stage_of_layer = training._layout.plan.stage_of_layer
    assert stage_of_layer["Inline"] == 0 and stage_of_layer["Inline@stage1"] == 1


def test_block_and_ipu_errors():
    layer = torch.nn.Linear(2, 2)
    poptorch.BeginBlock(layer, ipu_id=0)
    with pytest.raises(poptorch.Error, match="module has already been assigned to a block."):
        poptorch.BeginBlock(layer, ipu_id=1)
    with pytest.raises(poptorch.Error, match="module is not an instance of torch.nn.Module or function."):
        poptorch.BeginBlock(3)
    with pytest.raises(ValueError, match="ipu_id must be an integer >= 0 .*got -1"):
        poptorch.BeginBlock(torch.nn.Linear(2, 2), ipu_id=-1)
    with pytest.raises(ValueError, match="ipu_id must be an integer >= 0"):
        poptorch.Stage("A").ipu("1")
    poptorch.removeBlocks(layer)
    poptorch.BeginBlock(layer, ipu_id=1)  # allowed again once removed

    model = Linears(3)
    poptorch.BeginBlock(model.layers[1], ipu_id=1)
    poptorch.BeginBlock(model.layers[2], ipu_id=2)
    x, y = _data(B * 8, 3, 3)
    with pytest.raises(
        poptorch.Error, match=r"specifies the use of 3 IPUs, however PopTorch must reserve a minimum of 4"
    ):
        _training(model)(x, y)
    opts = poptorch.Options().autoRoundNumIPUs(True)
    opts.Training.gradientAccumulation(8)
    training = poptorch.trainingModel(model, opts)
    training(x, y)
    assert training._configuration.num_ipus == 4


def test_blocks_do_nothing_outside_the_ipu():
    model = Linears(2)
    poptorch.BeginBlock(model.layers[1], ipu_id=1)
    with poptorch.Block("A", ipu_id=3):
        out, loss = model(*_data(2, 3, 3))  # on the CPU: no strategy, no error
    assert out.shape == (2, 3)


def test_explorer_and_profile_on_a_poptorch_pipeline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", '{"autoReport.all": "true", "autoReport.directory": "./report"}')
    training = _training(TwoDense(), accumulation=8)
    training(*_data(B * 8))
    explorer = PipelineExplorer.from_model(training)
    run = training.get_ipu_executable().pipeline
    assert explorer.costs.stages == 2 and explorer.accumulation.value == 8
    assert explorer.schedule.value == "PopTorch"  # opens on the model's own schedule
    assert explorer.costs.forward == tuple(s * 1e6 for s in run.costs.forward)
    assert len(list((tmp_path / "report").glob("*/profile.json"))) == 1
    one_ipu = _training(TwoDense(second_ipu=None), accumulation=8)
    one_ipu(*_data(B * 8))
    with pytest.raises(ValueError, match=r"a PopTorch model: poptorch.BeginBlock\(layer, ipu_id=1\) on a layer"):
        PipelineExplorer.from_model(one_ipu)


def test_memory_proportions_are_per_ipu():
    class TwoConvs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(1, 32, 3)
            self.b = poptorch.BeginBlock(torch.nn.Conv2d(32, 64, 3), ipu_id=1)

        def forward(self, x, y):
            return torch.nn.functional.mse_loss(self.b(self.a(x)).mean(dim=(2, 3)), y)

    def stage_costs(proportions):
        opts = poptorch.Options().setAvailableMemoryProportion(proportions) if proportions else poptorch.Options()
        opts.Training.gradientAccumulation(4)
        model = poptorch.trainingModel(TwoConvs(), opts)
        model.compile(torch.zeros(4 * 64, 1, 28, 28), torch.zeros(4 * 64, 64))
        costs = model.get_ipu_executable().pipeline.costs
        return np.add(costs.forward, costs.backward)

    default, first, second = stage_costs({}), stage_costs({"IPU0": 0.01}), stage_costs({"IPU1": 0.01})
    # a small proportion plans an IPU's products in more, smaller pieces: slower, on that IPU's stage only
    assert first[0] > default[0] and first[1] == default[1]
    assert second[1] > default[1] and second[0] == default[0]
