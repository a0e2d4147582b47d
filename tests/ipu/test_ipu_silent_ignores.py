"""What used to be dropped without a word is said: pipelining options on a model without stages, IPUs
a pipeline leaves idle, and a new configure_ipu_system after the model ran on the old one."""

import pytest
from helpers.models import compile_model
from ipu_test_helpers import build, configure, data, ipu_model

import ipu_teach.keras as keras
from ipu_teach import ipu, profiling


def fit_with_pipelining_options(capsys, ipus, model_fn, accumulation, samples):
    """Fit a model with set_pipelining_options on ``ipus`` IPUs; return what it printed."""
    configure(ipus)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = model_fn()
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=accumulation)
        compile_model(model, steps_per_execution=accumulation)
    x, y = data(samples)
    model.fit(x, y, batch_size=8, verbose=0)
    return model, capsys.readouterr().out


def test_pipelining_options_on_a_model_without_stages_are_a_warning(capsys):
    model, out = fit_with_pipelining_options(capsys, 2, build, 8, 128)
    assert (
        f"WARNING:ipu_teach:Model `{model.name}` has pipelining options (gradient_accumulation_steps_per_replica=8) "
        "but no pipeline stages, so it is not pipelined and they are ignored"
    ) in out
    assert "set_gradient_accumulation_options(gradient_accumulation_steps_per_replica=8)" in out


def three_stage_model():
    inputs = keras.Input(shape=(6,))
    x = inputs
    for stage in range(3):
        with keras.ipu.PipelineStage(stage):
            x = keras.layers.Dense(3 if stage == 2 else 8, activation="softmax" if stage == 2 else "relu")(x)
    return keras.Model(inputs, x)


def test_a_three_stage_pipeline_on_four_ipus_says_one_stays_idle(capsys):
    model, out = fit_with_pipelining_options(capsys, 4, three_stage_model, 6, 96)
    assert (
        f"WARNING:ipu_teach:The pipeline of model `{model.name}` runs on 3 IPUs per replica, so it uses 3 of the "
        "4 IPUs selected and 1 stay idle; use 4 stages"
    ) in out


def test_a_new_configuration_replaces_the_old_one_for_a_model_already_run(tmp_path, capsys):
    configure(1)
    model = ipu_model(steps_per_execution=4)
    x, y = data(64)
    model.fit(x, y, batch_size=8, verbose=0)
    assert model.device_executor.prepared["train"].setup.replicas == 1
    configure(2)
    model.fit(x, y, batch_size=8, verbose=0)
    assert model.device_executor.prepared["train"].setup.replicas == 2
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.profiling.auto_report = True
    config.profiling.directory = str(tmp_path)
    config.configure_ipu_system()
    model.fit(x, y, batch_size=8, verbose=0)  # the same program as the first fit, but reports are on now
    assert len(profiling.written_reports()) == 1 and list(tmp_path.rglob("profile.json"))


@pytest.mark.parametrize(
    "returned, message",
    [
        (None, r"codelet 'broken' returned None for field 'out': does the function end with `return`\?"),
        (0.0, r"codelet 'broken': field 'out' returned shape \(\), expected \(2,\) \(one row per vertex\)"),
        ("text", r"codelet 'broken': field 'out' returned <U4 values"),
    ],
)
def test_a_codelet_output_of_the_wrong_shape_or_none_is_an_error_not_broadcast(returned, message):
    from ipu_teach.bsp import GraphError, poplar

    @poplar.codelet(inputs={"a": "n"}, outputs={"out": ""})
    def broken(a):
        return returned

    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=2).create_device())
    a = graph.add_variable("float32", (2, 3), "a")
    out = graph.add_variable("float32", (2,), "out")
    graph.map_tensor_linearly(a, grain=3)
    graph.map_tensor_linearly(out)
    compute_set = graph.add_compute_set("cs")
    for tile in range(2):
        graph.add_vertex(compute_set, broken, {"a": a[tile], "out": out[tile]}, tile=tile)
    with pytest.raises(GraphError, match=message):
        poplar.Engine(graph, poplar.Execute(compute_set)).run()
