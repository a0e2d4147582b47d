"""Compile time grows with the graph Poplar compiles: the tiles working in each compute set, the tensor windows
its convolution vertices connect (so a layer's weights), the tiles each tensor is laid out on, every IPU's control
code for the whole program and each IPU's share of the graph; code compiled once (an outlined op's later calls) is
charged once; replicas share one compilation; the tutorial's compile times come back."""

import numpy as np
import pytest
from helpers.scripts import load_script
from ipu_test_helpers import configure, data, ipu_model

from ipu_teach import hardware, keras
from ipu_teach.autograd.cost import MatrixProduct
from ipu_teach.ipu import compile_time, ipu_strategy, matrix_plan, memory_layout

fit_compile_time = load_script("benchmarks/fit_compile_time.py")  # the calibration figures and how they were derived
compile_case, graph_elements = (
    fit_compile_time.fidelity_cases.compile_case,
    fit_compile_time.fidelity_cases.graph_elements,
)

HOST = hardware.HOST


def train_executable(num_ipus=1, **ipu_model_options):
    x, y = data(64)
    configure(num_ipus, **ipu_model_options)
    model = ipu_model(steps_per_execution=4)
    model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    return model.get_ipu_executable("train")


def test_the_compile_time_is_the_graph_size_at_the_fitted_rates():
    executable = train_executable()
    size = compile_time.graph_size(executable.graph)
    graph = executable.graph
    assert size.program_tile_steps == graph.compute_sets * graph.spec.tiles
    assert 0 < size.working_tile_steps <= size.program_tile_steps
    assert size.tensor_windows == sum(int(step.windows.sum()) for step in graph.steps if step.windows is not None)
    assert size.tensor_windows > 0
    tensors = [item for item in graph.memory if item.category not in hardware.CODE_CATEGORIES]
    assert {item.category for item in tensors} >= {"variables", "activations", "gradients"}
    assert size.tensor_regions == sum(int((item.per_tile > 0).sum()) for item in tensors) > 0
    expected = (
        HOST.compile_base_s
        + HOST.compile_s_per_working_tile_step * size.working_tile_steps
        + HOST.compile_s_per_tensor_window * size.tensor_windows
        + HOST.compile_s_per_tensor_region * size.tensor_regions
        + HOST.compile_s_per_program_tile_step * size.program_tile_steps
    )
    assert executable.compile_seconds == pytest.approx(expected)


def dense_chain(layers, width=64):
    """The training executable of ``layers`` identical Dense(width, relu) layers after a first Dense layer."""
    configure(1)
    x = np.zeros((64, width), np.float32)
    with ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential(
            [keras.layers.Dense(width, input_shape=(width,))]
            + [keras.layers.Dense(width, activation="relu") for _ in range(layers)]
        )
        model.compile("sgd", "mse", steps_per_execution=4)
        model.fit(x, x, batch_size=16, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def test_an_outlined_op_is_compiled_once_and_its_later_calls_add_no_vertices():
    """Poplar compiles identical products once as a function (Graphcore TF's outline_instructions.cc): the
    counts are over ``memory_layout.compiled_steps``, so a third identical layer adds only its own element-wise
    steps (its bias, its ReLU), not its product's vertices, windows and syncs again."""
    two, three = dense_chain(2), dense_chain(3)
    graph = three.graph
    compiled = memory_layout.compiled_steps(graph.steps)
    called_again = [step for step in graph.steps if step not in compiled]
    assert called_again and all(step.outlined is not None and "MatMul" in step.name for step in called_again)
    size = compile_time.graph_size(graph)
    assert size.program_tile_steps == len(compiled) * graph.spec.tiles < graph.compute_sets * graph.spec.tiles
    assert size.working_tile_steps == sum(int(((s.cycles > 0) | (s.received > 0)).sum()) for s in compiled)
    assert size.tensor_windows == sum(int(s.windows.sum()) for s in compiled if s.windows is not None)
    sizes = [compile_time.graph_size(e.graph) for e in (two, three)]
    assert sizes[1].tensor_windows == sizes[0].tensor_windows  # the third product's windows are the function's
    # its own tensors (weights, activation, gradients) are new variables all the same
    assert sizes[1].tensor_regions > sizes[0].tensor_regions
    # the third layer adds 20 steps to the program, of which its product's 13 (forward: rearrangement, product,
    # reduction; backward: two products, each regrouped, copied into the plan's layout, rearranged and reduced)
    # are calls of the function
    own = [step for step in graph.steps if step.scope == called_again[0].scope]
    assert len(graph.steps) - len(two.graph.steps) == len(own) == 20
    assert sum(step.outlined is None for step in own) == 7  # bias add, ReLU, their gradients, the two updates
    assert sizes[1].program_tile_steps - sizes[0].program_tile_steps == 7 * graph.spec.tiles


def test_a_tensor_is_charged_on_every_tile_it_is_laid_out_on():
    """A wider layer's weights (and their gradients, and the input's activations) span more tiles: more variable
    regions for Poplar to lay out, whatever the compute sets."""
    small, wide = dense_executable(64), dense_executable(65_536)
    sizes = [compile_time.graph_size(e.graph) for e in (small, wide)]
    weights = [next(i for i in e.graph.memory if i.category == "variables") for e in (small, wide)]
    spread = [int((w.per_tile > 0).sum()) for w in weights]
    assert spread[0] == 64 * 10 * 4 // 128  # 128 B per tile at least (memory_layout.MIN_BYTES_PER_TILE)
    assert spread[1] > 0.99 * wide.graph.spec.tiles
    assert sizes[1].tensor_regions > 3 * sizes[0].tensor_regions


def test_a_convolution_vertex_connects_a_window_per_channel_group_and_weights_pair():
    """As poplibs' createConvPartialAmpVertex connects its input, output and weights windows."""
    assert matrix_plan.vertex_windows(1, 1) == 3
    assert matrix_plan.vertex_windows(21, 2) == 21 * 2 + 21 + 2
    product = MatrixProduct(rows=16, depth=4096, cols=64, channels=4096)
    chosen = matrix_plan.plan(product, hardware.MK2)
    depth, cols = -(-4096 // chosen.depth_split), -(-64 // chosen.cols_split)
    in_groups, out_groups = -(-depth // hardware.MK2.amp_channel_group), -(-cols // hardware.MK2.amp_conv_units)
    assert chosen.windows == matrix_plan.vertex_windows(in_groups, out_groups)


def dense_executable(features):
    """A one-layer model of ``features`` inputs: its weights grow with them, its compute sets do not."""
    configure(1)
    x = np.zeros((64, features), np.float32)
    y = np.zeros((64, 10), np.float32)
    with ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential([keras.layers.Dense(10, input_shape=(features,))])
        model.compile("sgd", "mse", steps_per_execution=4)
        model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def test_a_layer_with_more_weights_compiles_longer_through_its_tensor_windows():
    small, wide = dense_executable(64), dense_executable(65_536)
    # the same compute sets but the wide product's deeper reduction stages (poplin's multi-stage reduce)
    small_steps, wide_steps = ({s.name.split("/", 1)[1] for s in e.graph.steps} for e in (small, wide))
    assert small_steps < wide_steps and all("/reduce" in name for name in wide_steps - small_steps)
    sizes = [compile_time.graph_size(e.graph) for e in (small, wide)]
    assert sizes[1].tensor_windows > 10 * sizes[0].tensor_windows
    # the windows alone account for more than a second of the difference
    extra_windows = HOST.compile_s_per_tensor_window * (sizes[1].tensor_windows - sizes[0].tensor_windows)
    assert extra_windows > 1.0
    assert wide.compile_seconds - small.compile_seconds >= extra_windows


def test_the_same_program_on_fewer_tiles_compiles_faster():
    """Same compute sets, fewer tiles to generate vertices, exchange and control code for."""
    full = train_executable()
    small = train_executable(tiles_per_ipu=16)
    assert small.graph.compute_sets == full.graph.compute_sets
    assert HOST.compile_base_s < small.compile_seconds < full.compile_seconds


def test_replicas_share_one_compilation():
    assert train_executable(2).compile_seconds == train_executable(1).compile_seconds


def test_each_pipeline_ipu_holds_the_whole_programs_control_code():
    one = compile_case(dict(fit_compile_time.TUTORIAL, mode="test", steps_per_execution=8))
    piped = compile_case(dict(fit_compile_time.TUTORIAL, mode="test", steps_per_execution=8, pipeline_stages=2))
    sizes = [
        compile_time.graph_size(e.graph, None if e.pipeline is None else e.pipeline.stage_graphs) for e in (one, piped)
    ]
    assert sizes[1].program_tile_steps == 2 * piped.graph.compute_sets * piped.graph.spec.tiles
    # Poplar compiles one graph over both IPUs: each IPU's share of the vertices and windows is added, not
    # compiled beside the other (the stage graphs together hold the same products as the one-IPU program)
    stages = piped.pipeline.stage_graphs
    assert sizes[1].tensor_windows == sum(compile_time.graph_size(g).tensor_windows for g in stages)
    assert sizes[1].tensor_windows == sizes[0].tensor_windows
    assert sizes[1].working_tile_steps == sum(compile_time.graph_size(g).working_tile_steps for g in stages)
    assert piped.compile_seconds > one.compile_seconds * 1.1  # the tutorial logs 17 s against 14 s


@pytest.mark.parametrize("name", ["train, whole epoch", "evaluate, whole test set", "train, pipelined on 2 IPUs"])
def test_the_tutorials_compile_times_come_back_within_ten_percent(name):
    """The calibration figures the constants were fitted to (benchmarks/fit_compile_time.py)."""
    _, seconds, _, case = next(row for row in fit_compile_time.CALIBRATION if row[0] == name)
    case = dict(case, steps_per_execution=8 if case["mode"] == "test" else 16)  # the loop count does not matter
    assert compile_case(dict(fit_compile_time.TUTORIAL, **case)).compile_seconds == pytest.approx(seconds, rel=0.1)


def test_the_graph_size_a_profile_summary_counts_is_what_compile_time_is_charged_on():
    """bench_fidelity compares it with a Graph Analyser summary's vertices plus edges (Poplar tutorial 4)."""
    piped = compile_case(dict(fit_compile_time.TUTORIAL, mode="test", steps_per_execution=8, pipeline_stages=2))
    size = compile_time.graph_size(piped.graph, piped.pipeline.stage_graphs)
    assert graph_elements(piped) == size.working_tile_steps + size.tensor_windows
    charged = (
        piped.compile_seconds - HOST.compile_base_s - HOST.compile_s_per_program_tile_step * size.program_tile_steps
    )
    # vertices, edges and variables, at one rate (the tutorial's compiles cannot tell them apart)
    rate = HOST.compile_s_per_working_tile_step
    assert HOST.compile_s_per_tensor_window == HOST.compile_s_per_tensor_region == rate
    assert charged == pytest.approx(rate * (graph_elements(piped) + size.tensor_regions))


def test_the_check_set_is_every_published_compile_time_kept_out_of_the_fit():
    """fit_compile_time prints its fit beside these (fidelity_cases.json's compile figures with 'check_set'):
    other models than the tutorial's, a sizing case's program traced at its published configuration."""
    rows = {name: (seconds, size) for name, seconds, size in fit_compile_time.check_set()}
    assert list(rows) == [
        "alcf-poptorch-mnist-train-compile",
        "alcf-poptorch-mnist-inference-compile",
        "alcf-tf2-mnist-first-epoch-compile",
        "alcf-resnet50-pod4-compile",
        "alcf-bert-tiny-4ipu-compile",
    ]
    assert all(seconds > 0 and size.working_tile_steps > 0 for seconds, size in rows.values())
    resnet, mnist = rows["alcf-resnet50-pod4-compile"][1], rows["alcf-poptorch-mnist-train-compile"][1]
    assert resnet.tensor_windows > 50 * mnist.tensor_windows  # ResNet-50's 25.6 M weights, against 0.2 M
    tiny_bert = rows["alcf-bert-tiny-4ipu-compile"][1]
    assert tiny_bert.program_tile_steps % hardware.BOW.tiles == 0  # every tile holds the whole program
