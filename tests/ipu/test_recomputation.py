"""Recomputation in a model that is not pipelined (``IPUConfig.allow_recompute`` with recomputation checkpoints):
the activations between checkpoints are recomputed before their backward pass, not kept, so the memory live at
once falls, the cycles rise by exactly the recomputed forward steps' cost, and the numerics do not change."""

import numpy as np
import pytest

from ipu_teach import bsp, hardware, ipu, keras
from ipu_teach.examples import configure_ipus
from ipu_teach.ipu import estimate, memory_layout, out_of_memory, recomputation
from ipu_teach.ipu.ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint

BATCH = 4096


def checkpointed_mlp(seed=0, checkpoint=RecomputationCheckpoint):
    """Twelve Dense layers, a checkpoint after every third: four segments."""
    keras.utils.set_random_seed(seed)
    x = inputs = keras.Input(shape=(64,))
    for i in range(12):
        x = keras.layers.Dense(64, activation="relu", name=f"dense{i}")(x)
        if i in (2, 5, 8):
            x = checkpoint()(x)
    outputs = keras.layers.Dense(10, activation="softmax", name="head")(x)
    return keras.Model(inputs, outputs)


def sized(allow_recompute, build=checkpointed_mlp):
    config = configure_ipus(1)
    config.allow_recompute = allow_recompute
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = build()
        model.compile("sgd", "sparse_categorical_crossentropy")
        return model, ipu.utils.estimate(model, batch_size=BATCH)


def live_peak(graph) -> int:
    return memory_layout.ipu_peak(graph.memory, len(graph.steps))


def test_segments_count_the_checkpoints_before_each_layer():
    model = checkpointed_mlp()
    segments = recomputation.segments_of(model)
    assert [segments[f"dense{i}"] for i in range(12)] == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert segments["head"] == 3
    plain = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
    assert recomputation.segments_of(plain) is None


def test_a_skip_connection_past_a_checkpoint_is_in_the_segment_of_its_latest_input():
    x = inputs = keras.Input(shape=(8,))
    a = keras.layers.Dense(8, name="a")(x)
    b = RecomputationCheckpoint(name="cut")(keras.layers.Dense(8, name="b")(a))
    added = keras.layers.Add(name="add")([a, b])
    segments = recomputation.segments_of(keras.Model(inputs, added))
    assert (segments["a"], segments["b"], segments["cut"], segments["add"]) == (0, 0, 1, 1)


def test_recomputation_lowers_the_live_memory_and_costs_exactly_the_recomputed_forward():
    model, plain = sized(False)
    _, recomputed = sized(True)
    kept, again = plain.executable.graph, recomputed.executable.graph
    assert live_peak(again) < 0.9 * live_peak(kept)
    assert recomputed.max_tile_bytes < plain.max_tile_bytes
    # the forward steps of every segment but the last (whose backward follows at once) run a second time, but
    # for the ReLUs that make the checkpoints (dense2, dense5, dense8: their outputs were kept)
    segments = recomputation.segments_of(model)
    checkpointing = {f"dense{i}" for i in (2, 5, 8)}
    early = [
        s
        for s in kept.forward
        if segments.get(s.scope, 3) < 3 and not (s.scope in checkpointing and s.name.split("/")[1].startswith("ReLU"))
    ]
    assert len({s.scope for s in early}) == 9
    names = [s.name for s in again.backward if s.phase == "recompute"]
    assert names == [
        recomputation.recomputed_step(s).name for segment in (2, 1, 0) for s in early if segments[s.scope] == segment
    ]
    assert names[0].startswith("dense6/MatMul:") and "/recompute" in names[0]
    extra = bsp.CostEngine(bsp.Sequence([s.program() for s in early]), kept.spec).run().total_cycles()
    assert extra > 0
    assert recomputed.executable.timeline.total_cycles() - plain.executable.timeline.total_cycles() == extra
    assert [s.name for s in again.forward] == [s.name for s in kept.forward]


def test_without_allow_recompute_or_without_checkpoints_nothing_is_recomputed():
    _, off = sized(False)
    assert not [s for s in off.executable.graph.backward if s.phase == "recompute"]

    def unmarked():
        return checkpointed_mlp(checkpoint=lambda: keras.layers.Activation("linear"))

    _, on = sized(True, unmarked)
    assert not [s for s in on.executable.graph.backward if s.phase == "recompute"]


def test_a_checkpoint_made_by_the_op_function_recomputes_the_same():
    def with_op():
        return checkpointed_mlp(checkpoint=lambda: ipu.pipelining_ops.recomputation_checkpoint)

    _, by_layer = sized(True)
    _, by_op = sized(True, with_op)
    assert by_op.executable.timeline.total_cycles() == by_layer.executable.timeline.total_cycles()
    assert by_op.max_tile_bytes == by_layer.max_tile_bytes


def test_recomputation_leaves_the_gradients_and_the_trained_weights_unchanged():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4 * BATCH, 64)).astype(np.float32)
    y = rng.integers(0, 10, size=4 * BATCH)
    trained = []
    for allow_recompute in (False, True):
        config = configure_ipus(1)
        config.allow_recompute = allow_recompute
        config.configure_ipu_system()
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = checkpointed_mlp(seed=3)
            model.compile(keras.optimizers.SGD(0.05), "sparse_categorical_crossentropy", steps_per_execution=4)
            history = model.fit(x, y, batch_size=BATCH, epochs=2, verbose=0)
            executable = model.get_ipu_executable("train")
            trained.append((history.history["loss"], [w.numpy() for w in model.weights], executable))
    (loss_off, weights_off, off), (loss_on, weights_on, on) = trained
    assert any(s.phase == "recompute" for s in on.graph.backward)
    assert not any(s.phase == "recompute" for s in off.graph.backward)
    assert loss_on == loss_off
    for a, b in zip(weights_off, weights_on):
        np.testing.assert_array_equal(a, b)


def test_a_recomputed_activation_lives_from_its_recomputation_to_its_gradient_and_a_checkpoint_throughout():
    _, recomputed = sized(True)
    graph = recomputed.executable.graph
    spans = memory_layout.op_spans(graph.steps)
    (again,) = [m for m in graph.memory if m.name == "dense0/MatMul:0/recomputed output"]
    assert again.live == (spans["dense0/MatMul:0/recompute"][0], spans["dense0/MatMul:0/grad"][1])
    first_pass = next(m for m in graph.memory if m.name == "dense0/MatMul:0/output")
    assert first_pass.live[1] < spans["dense0/MatMul:0/recompute"][0]  # not kept through the backward pass
    # dense2's ReLU feeds the first checkpoint: kept from the forward pass to its gradient, never recomputed
    relu = next(name for name in spans if name.startswith("dense2/ReLU:") and name.count("/") == 1)
    checkpoint = next(m for m in graph.memory if m.name == f"{relu}/checkpoint")
    assert checkpoint.live == (spans[relu][0], spans[f"{relu}/grad"][1])
    assert f"{relu}/recompute" not in spans  # its output was kept: its op is not run again
    matmul = next(m for m in graph.memory if m.name == "dense2/MatMul:6/output")  # inside the layer: recomputed
    assert matmul.live[1] < spans["dense2/MatMul:6/recompute"][0]


def test_the_estimates_categories_are_those_live_at_the_fullest_step_and_add_up_to_the_ipus_peak():
    for allow_recompute in (False, True):
        _, sizing = sized(allow_recompute)
        graph = sizing.executable.graph
        assert sum(sizing.memory_by_category.values()) == live_peak(graph)
        everything = sum(int(m.per_tile.sum()) for m in graph.memory if m.category == "activations")
        assert sizing.memory_by_category["activations"] < everything


def test_checkpoints_added_to_a_built_model_share_its_layers_and_compute_the_same():
    from ipu_teach.examples import with_recomputation_checkpoints

    x = inputs = keras.Input(shape=(6,))
    skip = keras.layers.Dense(6, name="first")(x)
    out = keras.layers.Add(name="add")([skip, keras.layers.Dense(6, name="second")(skip)])
    model = keras.Model(inputs, keras.layers.Dense(2, name="head")(out))
    cut = with_recomputation_checkpoints(model, ["first", "add"])
    assert [type(layer).__name__ for layer in cut.layers].count("RecomputationCheckpoint") == 2
    assert cut.get_layer("first") is model.get_layer("first") and cut.name == model.name
    values = np.random.default_rng(1).normal(size=(3, 6)).astype(np.float32)
    np.testing.assert_array_equal(cut.predict(values, verbose=0), model.predict(values, verbose=0))
    assert recomputation.segments_of(cut)["head"] == 2
    with pytest.raises(ValueError, match=r"has no layer\(s\) \['nope'\]; name layers of model.layers"):
        with_recomputation_checkpoints(model, ["first", "nope"])


def test_pipeline_stages_sharing_an_ipu_are_sized_together_on_it():
    config = configure_ipus(2)
    config.allow_recompute = True
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        x = inputs = keras.Input(shape=(32,))
        for stage in range(3):
            with keras.ipu.PipelineStage(stage):
                x = keras.layers.Dense(32, name=f"dense{stage}")(x)
        model = keras.Model(inputs, x)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=6, device_mapping=[0, 1, 0])
        model.compile("sgd", "mse", steps_per_execution=6)
        sizing = ipu.utils.estimate(model, batch_size=8)
    stages = [graph.tile_memory() for graph in sizing.executable.pipeline.stage_graphs]
    assert sizing.ipus_per_replica == 2 and len(sizing.tile_bytes) == 2
    np.testing.assert_array_equal(sizing.tile_bytes[0], stages[0] + stages[2])
    np.testing.assert_array_equal(sizing.tile_bytes[1], stages[1])


def pipelined(mode, checkpoint=RecomputationCheckpoint, after=(1, 3)):
    """Two stages on two IPUs, stage 0 six Dense layers with a checkpoint after every second (``after``)."""
    config = configure_ipus(2)
    config.allow_recompute = True
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        keras.utils.set_random_seed(0)
        x = inputs = keras.Input(shape=(64,))
        with keras.ipu.PipelineStage(0):
            for i in range(6):
                x = keras.layers.Dense(64, activation="relu", name=f"dense{i}")(x)
                if i in after:
                    x = checkpoint()(x)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(10, activation="softmax", name="head")(x)
        model = keras.Model(inputs, outputs)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4, recomputation_mode=mode)
        model.compile("sgd", "sparse_categorical_crossentropy", steps_per_execution=4)
        return ipu.utils.estimate(model, batch_size=BATCH).executable


def test_a_pipeline_recomputing_interleaved_recomputes_a_stage_segment_by_segment():
    modes = ipu.pipelining_ops.RecomputationMode
    interleaved = pipelined(modes.RecomputeAndBackpropagateInterleaved)
    whole = pipelined(modes.RecomputeThenBackpropagate)
    # the same forward steps again (every stage's, as ipu-teach's pipeline recomputes each stage; the compiled
    # metrics are not differentiated), now between the backward ones instead of all before them, but for the
    # ReLUs making the two checkpoints (dense1's, dense3's): their outputs are kept, so they are not run again
    again = [s.name for s in interleaved.graph.backward if s.phase == "recompute"]
    ops = [s for s in whole.graph.forward if s.scope != "metrics"]
    making = [s for s in ops if s.scope in ("dense1", "dense3") and s.name.split("/")[1].startswith("ReLU")]
    assert len(making) == 2
    assert sorted(again) == sorted(recomputation.recomputed_step(s).name for s in ops if s not in making)
    assert not [s for s in whole.graph.backward if s.phase == "recompute"]
    skipped = bsp.CostEngine(bsp.Sequence([s.program() for s in making]), whole.graph.spec).run().seconds()
    assert interleaved.pipeline.costs.backward[0] == pytest.approx(
        whole.pipeline.costs.backward[0] + whole.pipeline.costs.forward[0] - skipped, rel=1e-12
    )
    # one segment's activations live at a time (and the checkpoints): fewer at the stage's fullest step; its
    # code grows with the recomputed steps, and the peak by no more than the code grew
    first, second = (run.pipeline.stage_graphs[0] for run in (interleaved, whole))
    activations = [[m for m in graph.memory if m.category == "activations"] for graph in (first, second)]
    live = [memory_layout.ipu_peak(items, len(graph.steps)) for items, graph in zip(activations, (first, second))]
    one = BATCH * 64 * 4  # one micro-batch's output of one op (MatMul, Add, ReLU of each Dense)
    stashed = int(next(m for m in first.memory if m.name == "stage0/stashed inputs").per_tile.sum())
    copies = stashed // one  # micro-batches in flight: the stage's input is stashed for each
    assert live[1] == stashed + 18 * one  # the stage's 18 outputs, recomputed all at once
    assert live[0] == stashed + (6 + 2 * copies) * one  # one segment's 6 and the 2 checkpoints, stashed as the input
    code = [sum(estimate.live_categories(g).get(c, 0) for c in hardware.CODE_CATEGORIES) for g in (first, second)]
    assert live_peak(first) - live_peak(second) <= code[0] - code[1]
    checkpoints = [m for m in first.memory if m.name.endswith("/checkpoint")]
    assert [int(m.per_tile.sum()) for m in checkpoints] == [copies * one] * 2 and copies > 1


def test_a_pipeline_without_checkpoints_or_interleaving_recomputes_whole_stages_as_before():
    modes = ipu.pipelining_ops.RecomputationMode
    unmarked = pipelined(modes.RecomputeAndBackpropagateInterleaved, lambda: keras.layers.Activation("linear"))
    assert not [s for s in unmarked.graph.backward if s.phase == "recompute"]
    whole = pipelined(modes.RecomputeThenBackpropagate)
    assert not [m for m in whole.pipeline.stage_graphs[0].memory if m.name.endswith("/checkpoint")]


def test_a_pipeline_stages_steps_hold_its_recomputed_steps_so_every_live_span_is_within_them():
    """A stage's backward pass runs its recomputed forward steps (programs.stage_programs): its graph lists them
    too, so the live spans (indices into the stage's steps, lowering.split_by_stage) point at the steps they
    name, and what the fullest tile holds at its peak adds up to its memory (out_of_memory.breakdown)."""
    modes = ipu.pipelining_ops.RecomputationMode
    executable = pipelined(modes.RecomputeAndBackpropagateInterleaved)
    stage = executable.pipeline.stage_graphs[0]
    names = [step.name for step in stage.steps]
    assert any(step.phase == "recompute" for step in stage.backward)
    for item in stage.memory:
        if not item.always_live:
            assert 0 <= item.live_from <= item.live_until < len(names), item.name
    recomputed = next(m for m in stage.memory if m.name.endswith("/recomputed output"))
    assert names[recomputed.live_from].split("/")[2] == recomputation.RECOMPUTE
    tile = int(np.argmax(stage.tile_memory()))
    categories, _ = out_of_memory.breakdown(stage, tile)
    assert sum(n for _, n in categories) == stage.tile_memory()[tile]


def test_a_checkpoint_ending_a_stage_is_not_stashed_for_a_segment_with_nothing_to_recompute():
    """A checkpoint after a stage's last layer starts a segment that holds only the checkpoint layer there: no
    op of the stage recomputes from it, so, as Poplar, the stage does not keep it for every micro-batch in flight;
    its output is recomputed with its segment as any other."""
    modes = ipu.pipelining_ops.RecomputationMode
    ending = pipelined(modes.RecomputeAndBackpropagateInterleaved, after=(1, 3, 5)).pipeline.stage_graphs[0]
    inner = pipelined(modes.RecomputeAndBackpropagateInterleaved).pipeline.stage_graphs[0]
    kept = [[m.name for m in graph.memory if m.name.endswith("/checkpoint")] for graph in (ending, inner)]
    assert kept[0] == kept[1] and len(kept[0]) == 2 and not any(name.startswith("dense5/") for name in kept[0])
    assert any(m.name.startswith("dense5/ReLU") and m.name.endswith("/recomputed output") for m in ending.memory)
    assert live_peak(ending) == live_peak(inner)
