"""The optimizer state in Streaming Memory (``offload_weight_update_variables``, ipu/offloading.py): live only at
its weight's update, copied in and out over the IPU's link at that update; numerics unchanged."""

import numpy as np
import pytest
from ipu_test_helpers import assert_same_weights, build, data, fit

import ipu_teach.keras as keras
from ipu_teach import bsp, hardware, ipu
from ipu_teach.examples import two_stage_model

BATCH, ACCUMULATION = 8, 4


def trained(offload, accumulation=ACCUMULATION, pipelined=False, connection=None, remote_buffers=False):
    """A model trained with Adam (two slots a weight) and accumulation, its offloading as asked."""
    keras.backend.clear_session()
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2 if pipelined else 1
    if connection is not None:
        config.device_connection.type = connection
        config.device_connection.version = "ipu2"
        config.device_connection.enable_remote_buffers = remote_buffers
    config.configure_ipu_system()
    x, y = data(64)
    with ipu.ipu_strategy.IPUStrategy().scope():
        keras.utils.set_random_seed(0)
        model = two_stage_model() if pipelined else build(0)
        if pipelined:
            model.set_pipelining_options(
                gradient_accumulation_steps_per_replica=accumulation, offload_weight_update_variables=offload
            )
        elif accumulation > 1:
            model.set_gradient_accumulation_options(
                gradient_accumulation_steps_per_replica=accumulation,
                offload_weight_update_variables=offload,
            )
        model.compile(keras.optimizers.Adam(0.01), "categorical_crossentropy", steps_per_execution=accumulation * 2)
        if pipelined:
            x, y = np.ones((64, 4), np.float32), keras.utils.to_categorical(np.arange(64) % 2, 2)
        history = fit(model, x, y, batch_size=BATCH)
    return model, history


def slot_items(graph):
    return [m for m in graph.memory if m.category == "optimizer state"]


def streaming_rows(timeline):
    return [r for r, kind in enumerate(timeline.kinds) if kind == "streaming memory"]


def test_offloaded_optimizer_state_lives_only_at_its_weights_update():
    model, _ = trained(offload=True)
    graph = model.get_ipu_executable("train").graph
    names = [step.name for step in graph.steps]
    items = slot_items(graph)
    assert len(items) == 2 * len(model.trainable_weights)  # Adam: two slots a weight
    for item in items:
        weight = item.name.rsplit(":", 1)[0]
        assert not item.always_live and item.live_from == item.live_until
        assert names[item.live_from] == f"{weight}/update"
    on_chip, _ = trained(offload=False)
    on_chip_graph = on_chip.get_ipu_executable("train").graph
    assert all(item.always_live for item in slot_items(on_chip_graph))
    state = sum(int(item.per_tile.sum()) for item in items)
    always = [sum(int(m.per_tile.sum()) for m in g.memory if m.always_live) for g in (graph, on_chip_graph)]
    assert always[1] - always[0] == state  # the state left the always-live memory, nothing else did


def test_each_update_copies_its_state_in_and_out_over_the_ipus_link_and_nothing_else_changes():
    model, history = trained(offload=True)
    on_chip, on_chip_history = trained(offload=False)
    executable, reference = model.get_ipu_executable("train"), on_chip.get_ipu_executable("train")
    timeline, spec = executable.timeline, executable.graph.spec
    rows = streaming_rows(timeline)
    labels = [timeline.labels[r] for r in rows]
    weights = [w.name.rsplit(":", 1)[0] for w in model.trainable_weights]
    assert labels == [f"{w}/update/{way}" for w in weights for way in ("load", "store")]
    sizes = {w.name.rsplit(":", 1)[0]: int(w.size) * w.dtype.itemsize for w in model.trainable_weights}
    for r, label in zip(rows, labels):
        nbytes = 2 * sizes[label.rsplit("/", 2)[0]]  # two slots, each the weight's size
        link = -(-nbytes * spec.clock_hz // spec.host_link_bytes_per_s) + spec.seconds_to_cycles(
            spec.host_link_latency_s
        )
        assert timeline.exchange[r, 0] == link and timeline.sync[r, 0] == spec.sync_cycles_on_chip
        assert timeline.counts[r] == 2  # two weight updates an execution (8 steps, accumulating 4)
    copies = sum(int(timeline.counts[r] * (timeline.exchange[r, 0] + timeline.sync[r, 0])) for r in rows)
    assert timeline.total_cycles() - reference.timeline.total_cycles() == copies
    assert_same_weights(model, on_chip, rtol=0, atol=0)
    assert history.history["loss"] == on_chip_history.history["loss"]


def test_a_pipeline_offloads_each_stages_state_in_its_weight_update():
    model, _ = trained(offload=True, pipelined=True)
    executable = model.get_ipu_executable("train")
    rows = streaming_rows(executable.timeline)
    assert {executable.timeline.labels[r] for r in rows} == {
        f"{w.name.rsplit(':', 1)[0]}/update/{way}" for w in model.trainable_weights for way in ("load", "store")
    }
    for graph in executable.pipeline.stage_graphs:
        assert slot_items(graph) and not any(item.always_live for item in slot_items(graph))
    assert "Streaming Memory copies" in executable.explain()


@pytest.mark.parametrize(
    "why, settings",
    [
        ("not asked (None: Graphcore's automatic placement)", {"offload": None}),
        ("no gradient accumulation", {"offload": True, "accumulation": 1}),
        (
            "a compile-only device without remote buffers, not asked",
            {"offload": None, "connection": ipu.config.DeviceConnectionType.PRE_COMPILE},
        ),
    ],
)
def test_the_state_stays_on_chip_unless_offloading_can_apply(why, settings):
    model, _ = trained(**settings)
    executable = model.get_ipu_executable("train")
    assert all(item.always_live for item in slot_items(executable.graph)), why
    assert not streaming_rows(executable.timeline), why


def test_offloading_asked_without_remote_buffers_is_graphcores_error():
    with pytest.raises(RuntimeError, match=r"does not support remote memory .*enable_remote_buffers' set to True"):
        trained(offload=True, connection=ipu.config.DeviceConnectionType.PRE_COMPILE)


def test_a_compile_only_device_with_remote_buffers_offloads():
    model, _ = trained(offload=True, connection=ipu.config.DeviceConnectionType.PRE_COMPILE, remote_buffers=True)
    assert not any(item.always_live for item in slot_items(model.get_ipu_executable("train").graph))


def test_streaming_memory_copies_run_on_each_ipus_own_link_inside_parallel_blocks():
    spec = hardware.MK2.with_tiles(4)
    alone = bsp.CostEngine(bsp.StreamingMemoryCopy(1 << 20), spec).run()
    link = -(-(1 << 20) * spec.clock_hz // spec.host_link_bytes_per_s) + spec.seconds_to_cycles(
        spec.host_link_latency_s
    )
    assert alone.totals() == {"compute": 0, "sync": spec.sync_cycles_on_chip, "exchange": link}
    both = bsp.Parallel(
        [
            bsp.Sequence([bsp.StreamingMemoryCopy([1 << 20, 0])]),
            bsp.Sequence([bsp.ComputeSuperstep(bsp.CostedComputeSet("work", np.full(4, 10, np.int64)))]),
        ]
    )
    bsp.CostEngine(both, spec, ipus=2).run()  # no "put host streams ... between Parallel blocks"
    with pytest.raises(bsp.GraphError, match="bytes must be a non-negative integer or one per IPU"):
        bsp.StreamingMemoryCopy(-1)
