"""A matrix product's temporary memory (rearranged operands, partial sums) is live only while that product runs,
from its rearrangement to its partials' last reduction, as poplin's variables are under Poplar's liveness-based
allocator: a step holds its own product's temporaries and no other's, so the peak is what is live at a step."""

from types import SimpleNamespace

import numpy as np

from ipu_teach.ipu import memory_layout, out_of_memory
from ipu_teach.ipu.estimate import live_categories
from ipu_teach.ipu.lowering import LoweredStep

ALWAYS = np.array([1000, 1000])


def step(name, temporary=None):
    return LoweredStep(name, "forward", 0, np.zeros(2, np.int64), np.zeros(2, np.int64), temporary=temporary)


STEPS = [
    step("a/MatMul:0/transform"),  # 0
    step("a/MatMul:0", np.array([100, 40])),  # 1
    step("a/MatMul:0/reduce"),  # 2
    step("b/BiasAdd:1"),  # 3: no product
    step("c/MatMul:2/transform"),  # 4
    step("c/MatMul:2", np.array([30, 70])),  # 5
    step("c/MatMul:2/serial1/transform"),  # 6
    step("c/MatMul:2/serial1"),  # 7: a later serial pass reuses the first's temporaries
    step("c/MatMul:2/serial1/reduce1"),  # 8
    step("c/MatMul:2/product1", np.array([5, 5])),  # 9: another product of the same op has its own
    step("d/Relu:3"),  # 10
]


def memory():
    return [
        memory_layout.MemoryItem("weights", "variables", ALWAYS),
        memory_layout.MemoryItem("a/MatMul:0/output", "activations", np.array([10, 20]), live=(1, 5)),
        memory_layout.MemoryItem("b/BiasAdd:1/output", "activations", np.array([50, 50]), live=(3, 3)),
        *memory_layout.temporary_memory(STEPS, spec=None),
    ]


def test_each_product_holds_its_temporaries_from_its_rearrangement_to_its_last_reduction():
    temporaries = memory_layout.temporary_memory(STEPS, spec=None)
    assert [(m.name, m.category, m.per_tile.tolist(), m.live) for m in temporaries] == [
        ("a/MatMul:0/temporaries", "temporary memory", [100, 40], (0, 2)),
        ("c/MatMul:2/temporaries", "temporary memory", [30, 70], (4, 8)),
        ("c/MatMul:2/product1/temporaries", "temporary memory", [5, 5], (9, 9)),
    ]
    assert {m.popvision_category for m in temporaries} == {"not-always-live variables"}
    assert memory_layout.temporary_memory([step("b/BiasAdd:1")], spec=None) == []


def test_the_peak_is_what_is_live_at_a_step_plus_that_steps_own_temporaries():
    items = memory()
    # tile 0 peaks at steps 1-2 (a's temporaries and output: 100 + 10); tile 1 at steps 4-5 (c's 70, a's 20);
    # the BiasAdd at step 3 runs no product and holds none (its 50 + a's output), so it is no tile's peak
    assert memory_layout.allocated(items, len(STEPS), 2).tolist() == [1000 + 110, 1000 + 90]
    # over both tiles: a's 140 and output 30 at steps 1-2, the outputs 30 + 100 at step 3, c's 100 + 30 at 4-5
    assert memory_layout.ipu_peak(items, len(STEPS)) == 2000 + 170


def test_the_categories_at_the_peak_add_up_to_it():
    graph = SimpleNamespace(steps=STEPS, memory=memory())
    assert live_categories(graph) == {"variables": 2000, "activations": 30, "temporary memory": 140}  # step 1
    assert sum(live_categories(graph).values()) == memory_layout.ipu_peak(graph.memory, len(STEPS))
    categories, variables = out_of_memory.breakdown(graph, 1)  # tile 1 is fullest at step 4
    assert categories == [("variables", 1000), ("temporary memory", 70), ("activations", 20)]
    assert variables == [("weights", 1000), ("c/MatMul:2/temporaries", 70), ("a/MatMul:0/output", 20)]


def test_a_pipeline_stage_holds_each_products_temporaries_at_its_own_steps():
    from ipu_teach import ipu, keras

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.allow_recompute = True  # a stage's steps include its recomputed forward: every index must count it
    config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(28, 28, 1))
        with keras.ipu.PipelineStage(0):
            h = keras.layers.Conv2D(8, 3, activation="relu")(inputs)
            h = ipu.pipelining_ops.recomputation_checkpoint(h)  # stage 0 recomputes the next convolution
            h = keras.layers.Conv2D(16, 3, activation="relu")(h)
        with keras.ipu.PipelineStage(1):
            h = keras.layers.Dense(4, activation="softmax")(keras.layers.Flatten()(h))
        model = keras.Model(inputs, h)
        model.set_pipelining_options(
            gradient_accumulation_steps_per_replica=4,
            recomputation_mode=ipu.ops.pipelining_ops.RecomputationMode.RecomputeAndBackpropagateInterleaved,
        )
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
    model.fit(np.zeros((32, 28, 28, 1), np.float32), np.eye(4, dtype=np.float32)[np.zeros(32, int)], batch_size=8)
    stages = model.get_ipu_executable("train").pipeline.stage_graphs
    assert any(s.phase == "recompute" for s in stages[0].steps)  # stage 0 keeps its recomputed steps
    for stage in stages:
        temporaries = [m for m in stage.memory if m.category == memory_layout.TEMPORARY]
        products = [s for s in stage.steps if s.temporary is not None]
        assert products and [m.name for m in temporaries] == [f"{s.name}/temporaries" for s in products]
        for item, product in zip(temporaries, products):
            own = [s.name for s in stage.steps[item.live_from : item.live_until + 1]]
            assert product.name in own and all(name.startswith(product.name) for name in own)
