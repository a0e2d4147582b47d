"""Precision and temporary memory on the simulated IPU: fp16 runs faster on the AMP and halves the
activations, stochastic rounding follows IPUConfig.floating_point_behaviour.esr, and
availableMemoryProportion trades a product's temporary memory for serial passes."""

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu
from ipu_teach.autograd.cost import MatrixProduct
from ipu_teach.ipu import matrix_plan
from ipu_teach.keras import mixed_precision

MK2 = hardware.MK2


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    mixed_precision.set_global_policy(None)


def configure(tiles=None, conv=None, matmul=None, esr=None):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = tiles
    if conv is not None:
        config.convolutions.poplar_options = conv
    if matmul is not None:
        config.matmuls.poplar_options = matmul
    if esr is not None:
        config.floating_point_behaviour.esr = esr
    config.configure_ipu_system()


def fit_conv_model(policy, batch=16):
    """A small CNN trained one step on the IPU under ``policy``; returns its executable."""
    mixed_precision.set_global_policy(policy)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential(
            [
                keras.layers.Conv2D(64, 3, activation="relu", input_shape=(16, 16, 32)),
                keras.layers.Conv2D(64, 3),
                keras.layers.Flatten(),
                keras.layers.Dense(10),
                keras.layers.Activation("softmax", dtype="float32"),
            ]
        )
        model.compile("sgd", "categorical_crossentropy")
        x = np.random.default_rng(0).normal(size=(batch, 16, 16, 32)).astype(np.float32)
        y = keras.utils.to_categorical(np.arange(batch) % 10, 10)
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def convolution_cycles(graph, layer_op):
    """Cycles of the busiest tile summed over a forward convolution's compute sets: its operands' rearrangement,
    the AMP's passes, the reduction's stages and the bias."""
    return sum(int(s.cycles.max()) for s in graph.forward if s.name.startswith(layer_op))


def category_bytes(graph, category):
    return sum(int(m.per_tile.sum()) for m in graph.memory if m.category == category)


def test_fp16_convolutions_are_faster_and_their_activations_take_half_the_memory():
    configure()
    fp32 = fit_conv_model("float32")
    fp16 = fit_conv_model("mixed_float16")
    conv32, conv16 = (convolution_cycles(e.graph, "conv2d_1/Conv2D") for e in (fp32, fp16))
    # Poplar's default float partials: 8 conv units, twice the fp32 rate less the fixed costs; the planner may
    # trade some of it for fewer reduction stages, so the convolution's compute sets are compared as a whole
    assert conv32 / 2 < conv16 < conv32 / 1.4
    assert fp16.seconds_per_execution < fp32.seconds_per_execution
    convs32 = [m for m in fp32.graph.memory if m.category == "activations" and "/Conv2D" in m.name]
    convs16 = [m for m in fp16.graph.memory if m.category == "activations" and "/Conv2D" in m.name]
    assert [int(m.per_tile.sum()) for m in convs16] == [int(m.per_tile.sum()) // 2 for m in convs32]
    assert category_bytes(fp16.graph, "variables") == category_bytes(fp32.graph, "variables")  # fp32 for mixed


def test_the_amp_runs_fp16_at_two_or_four_times_fp32_by_partials_type():
    """poplibs picks the conv units by partials type: 8 for fp16 with float partials (2x fp32), 16 with half
    partials (4x, Graphcore's 250 TFLOPS); input channels go in groups of 16 in fp16 and 8 in fp32. On long runs
    of positions the rates show; on short ones each pass's fixed costs narrow the gap."""
    assert (MK2.channel_group("float16"), MK2.channel_group("float32")) == (16, 8)

    def amp(rows, **types):
        return matrix_plan.amp_cycles(rows=rows, depth=9 * 64, cols=64, channels=64, spec=MK2, **types)

    fp32, float_partials, half_partials = (
        amp(6000),
        amp(6000, dtype="float16"),
        amp(6000, dtype="float16", partials_type="half"),
    )
    assert float_partials == amp(6000, dtype="float16", partials_type="float")
    assert fp32 / 2 < float_partials < fp32 / 1.9
    assert fp32 / 4 < half_partials < fp32 / 3.7 and half_partials < float_partials / 1.9
    assert amp(6000, partials_type="half") == fp32  # fp32 inputs always sum in fp32
    assert amp(60) / amp(60, dtype="float16") < fp32 / float_partials  # 10 positions a worker: fixed costs weigh
    thin = dict(rows=60, depth=9, cols=8, channels=1, spec=MK2)  # one channel: fp16 wastes 15 of 16 inputs
    assert matrix_plan.amp_cycles(**thin, dtype="float16") <= matrix_plan.amp_cycles(**thin)


def test_the_ipu_config_partials_type_sets_the_fp16_convolutions_speed():
    """IPUConfig.convolutions.poplar_options' partialsType reaches the planner: half partials run the fp16
    convolutions on twice the conv units; fp32 convolutions do not care."""
    times = {}
    for policy in ("float32", "mixed_float16"):
        for partials in ("float", "half"):
            configure(conv={"partialsType": partials})
            executable = fit_conv_model(policy)
            times[policy, partials] = convolution_cycles(executable.graph, "conv2d_1/Conv2D")
    assert times["float32", "half"] == times["float32", "float"]
    assert times["mixed_float16", "half"] < times["mixed_float16", "float"]
    assert times["mixed_float16", "float"] < times["float32", "float"] / 1.4


def test_half_partials_halve_the_reduced_bytes():
    product = MatrixProduct(8, 4096, 8, 4096)
    as_float = matrix_plan._price(product, MK2, 2, 8, 1, 16)
    as_half = matrix_plan._price(product, MK2, 2, 8, 1, 16, options=matrix_plan.MatrixOptions(0.6, "half"))
    exchanged = [sum(stage.tiles * stage.received for stage in p.reduce_stages) for p in (as_half, as_float)]
    assert exchanged[0] * 2 == exchanged[1]


def test_a_lower_available_memory_proportion_buys_memory_with_serial_passes():
    product = MatrixProduct(rows=32, depth=2048, cols=512, channels=2048)
    spec = MK2.with_tiles(16)
    default = matrix_plan.plan(product, spec)
    low = matrix_plan.plan(product, spec, options=matrix_plan.MatrixOptions(0.1))
    assert default.temporary_bytes <= 0.6 * spec.sram_per_tile
    assert low.temporary_bytes <= 0.1 * spec.sram_per_tile < default.temporary_bytes
    assert low.serial_split > 1 and low.cycles(spec) > default.cycles(spec)


def dense_fit(matmul_options=None, tiles=16):
    configure(tiles=tiles, matmul=matmul_options)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential(
            [keras.layers.Dense(512, input_shape=(2048,)), keras.layers.Dense(10, activation="softmax")]
        )
        model.compile("sgd", "categorical_crossentropy")
        # a batch of 128: the products' temporaries are their activations' slices (the weights are laid out for them)
        x, y = np.zeros((128, 2048), np.float32), keras.utils.to_categorical(np.zeros(128), 10)
        model.fit(x, y, batch_size=128, epochs=1, verbose=0)
    return model.get_ipu_executable("train")


def test_the_out_of_memory_cure_of_available_memory_proportion_works():
    with pytest.raises(ipu.ModelOutOfMemoryError, match=r"temporary memory.*'availableMemoryProportion': '0.3'"):
        dense_fit()
    fitted = dense_fit({"availableMemoryProportion": "0.3"})
    graph = fitted.graph
    assert graph.tile_memory().max() <= graph.spec.sram_per_tile
    temporary = [m for m in graph.memory if m.category == "temporary memory"]
    products = [step.name for step in graph.steps if step.temporary is not None]
    assert [m.name for m in temporary] == [f"{name}/temporaries" for name in products]
    assert not any(m.always_live for m in temporary)
    serial = [k for k, step in enumerate(graph.steps) if "/serial1" in step.name]
    assert serial and all(any(m.live_from < k <= m.live_until for m in temporary) for k in serial)


def test_poplar_options_are_checked_as_strings_graphcore_takes():
    with pytest.raises(ValueError, match=r"matmuls.poplar_options\['availableMemoryProportion'\] must be .*'1.5'"):
        configure(matmul={"availableMemoryProportion": "1.5"})
    with pytest.raises(
        ValueError, match=r"convolutions.poplar_options: option\(s\) \['useFastPath'\] are not simulated"
    ):
        configure(conv={"useFastPath": "true"})
    with pytest.raises(ValueError, match="partialsType must be 'float' or 'half'"):
        configure(conv={"partialsType": "float32"})
    configure(conv={"availableMemoryProportion": 0.2, "partialsType": "half"})
    options = ipu.system.current().conv_options
    assert (options.available_memory_proportion, options.partials_type) == (0.2, "half")


def test_esr_takes_the_enum_or_a_bool_and_refuses_anything_else():
    configure(esr=True)
    assert ipu.system.current().stochastic_rounding
    configure(esr=ipu.config.StochasticRoundingBehaviour.OFF)
    assert not ipu.system.current().stochastic_rounding
    with pytest.raises(ValueError, match="esr must be an ipu.config.StochasticRoundingBehaviour"):
        configure(esr="on")


def fp16_weights_after_tiny_updates(esr, seed=0):
    """A float16 model whose SGD updates (1.28e-4) are under half fp16's spacing below 1.0 (4.9e-4)."""
    mixed_precision.set_global_policy("float16")
    configure(esr=esr)
    ipu.utils.reset_ipu_seed(seed)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential([keras.layers.Dense(1, input_shape=(64,), kernel_initializer="ones")])
        model.compile(
            mixed_precision.LossScaleOptimizer(keras.optimizers.SGD(1e-2), dynamic=False, initial_scale=1), "mse"
        )
        x = np.full((16, 64), 0.01, np.float32)
        before = model.get_weights()[0].copy()
        model.fit(x, np.zeros((16, 1), np.float32), batch_size=16, epochs=1, verbose=0)
    return before, model.get_weights()[0]


def test_stochastic_rounding_on_the_ipu_keeps_small_weight_updates_reproducibly():
    before, nearest = fp16_weights_after_tiny_updates(ipu.config.StochasticRoundingBehaviour.OFF)
    assert np.array_equal(before, nearest)  # every update rounded away
    _, stochastic = fp16_weights_after_tiny_updates(ipu.config.StochasticRoundingBehaviour.ON)
    assert stochastic.dtype == np.float16 and (stochastic < before).any()
    _, again = fp16_weights_after_tiny_updates(ipu.config.StochasticRoundingBehaviour.ON)
    assert np.array_equal(stochastic, again)


def test_host_io_streams_fp16_inputs_at_half_the_bytes():
    configure()
    sizes = []
    for dtype in (np.float32, np.float16):
        with ipu.ipu_strategy.IPUStrategy().scope():
            model = keras.Sequential([keras.layers.Dense(2, input_shape=(100,))])
            model.compile("sgd", "mse", steps_per_execution=1)
            model.predict(np.zeros((8, 100), dtype), batch_size=8, verbose=0)
        sizes.append(model.get_ipu_executable("predict").graph.input_bytes)
    assert sizes == [8 * 100 * 4, 8 * 100 * 2]


def test_pipeline_stage_options_set_one_stages_memory_proportion():
    configure()
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.ipu_model.tiles_per_ipu = 16
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(2048,))
        with keras.ipu.PipelineStage(0):
            hidden = keras.layers.Dense(256, name="big")(inputs)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(10, activation="softmax", name="head")(hidden)
        model = keras.Model(inputs, outputs)
        low = ipu.ops.pipelining_ops.PipelineStageOptions(matmul_options={"availableMemoryProportion": "0.05"})
        model.set_pipelining_options(
            gradient_accumulation_steps_per_replica=4,
            forward_propagation_stages_poplar_options=[low, ipu.ops.pipelining_ops.PipelineStageOptions()],
        )
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        # micro-batches of 32: the products' temporaries are their activations' slices (the weights laid out for them)
        x, y = np.zeros((128, 2048), np.float32), keras.utils.to_categorical(np.zeros(128), 10)
        model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    names = [step.name for step in model.get_ipu_executable("train").graph.forward]
    assert any(name.startswith("big/") and "/serial" in name for name in names)
    assert not any(name.startswith("head/") and "/serial" in name for name in names)
    with pytest.raises(TypeError, match="PipelineStageOptions"):
        model.set_pipelining_options(
            gradient_accumulation_steps_per_replica=4,
            forward_propagation_stages_poplar_options=[{"availableMemoryProportion": "0.1"}],
        )


def test_the_planner_splits_output_channels_by_the_conv_units_of_the_partials_type():
    """fp32 and fp16 with half partials make 16 output channels a pass, fp16 with float partials 8: the planner
    splits 32 output channels in sixteens or eights, and a 1-channel convolution is never slower than in fp32."""
    first_conv = MatrixProduct(rows=64 * 26 * 26, depth=9, cols=32, channels=1)
    fp32, fp16 = matrix_plan.plan(first_conv, MK2, 4), matrix_plan.plan(first_conv, MK2, 2)
    half = matrix_plan.plan(first_conv, MK2, 2, matrix_plan.MatrixOptions(partials_type="half"))
    assert all(plan.cols_split in (1, 2) for plan in (fp32, half)) and fp16.cols_split in (1, 2, 4)
    assert fp16.cycles(MK2) <= fp32.cycles(MK2) and half.cycles(MK2) <= fp16.cycles(MK2)
