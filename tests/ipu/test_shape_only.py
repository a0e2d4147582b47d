"""The shape-only lowering (ipu/shape_only.py) gives exactly the executable the real lowering gives: the same ops,
compute sets, cycles, memory, compile time and profile, for whole models (the tutorial's CNN in every mode, a
residual network with batch normalisation in fp32 and fp16, a pipelined model, replicas with accumulation), without
running the model; the compile-only paths (PRE_COMPILE, debug.allowOutOfMemory) take it; ipu.utils.estimate sizes a
model too big for the host's memory."""

import importlib.util
import pathlib
import tracemalloc

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.examples import tutorial_model_fn
from ipu_teach.ipu import executor, lowering, shape_only
from ipu_teach.keras import mixed_precision
from ipu_teach.profiling.build import build_report
from ipu_teach.profiling.files import report_to_dict

_spec = importlib.util.spec_from_file_location(
    "bench_shape_only", pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_shape_only.py"
)
bench_shape_only = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_shape_only)


@pytest.fixture(autouse=True)
def float32_policy_after():
    yield
    mixed_precision.set_global_policy(None)


def _no_real_run(*args, **kwargs):
    raise AssertionError("the shape-only lowering ran the model on the real micro-batch")


def _compile_both(model, mode, monkeypatch):
    """The executable of the setup ``model``'s last ``mode`` run prepared, compiled by the real lowering and by
    the shape-only one (which must not fall back to running the model)."""
    setup = model.device_executor.prepared[mode].setup
    real, _ = executor.compile_executable(model, setup, shape_only=False)
    with monkeypatch.context() as patch:
        patch.setattr(lowering, "_record_step", _no_real_run)
        shaped, _ = executor.compile_executable(model, setup, shape_only=True)
    return real, shaped


def _assert_same_executable(real, shaped, model, mode):
    assert shaped.explain() == real.explain()  # every op's compute sets, cycles, exchange and temporary memory
    assert shaped.graph.signature == real.graph.signature and shaped.key == real.key
    real_graphs = [real.graph] if real.pipeline is None else real.pipeline.stage_graphs
    shaped_graphs = [shaped.graph] if shaped.pipeline is None else shaped.pipeline.stage_graphs
    for a, b in zip(real_graphs, shaped_graphs, strict=True):
        assert [(m.name, m.category, m.live) for m in b.memory] == [(m.name, m.category, m.live) for m in a.memory]
        assert all(np.array_equal(m.per_tile, n.per_tile) for m, n in zip(a.memory, b.memory))
        assert np.array_equal(b.tile_memory(), a.tile_memory())
    assert shaped.timeline.total_cycles() == real.timeline.total_cycles()
    assert shaped.seconds_per_execution == real.seconds_per_execution
    assert shaped.compile_seconds == real.compile_seconds
    configuration = ipu.system.current()
    assert report_to_dict(build_report(model.name, mode, shaped, configuration)) == report_to_dict(
        build_report(model.name, mode, real, configuration)
    )


def _tutorial_cnn(spe=2):
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn())
        model.compile("sgd", "categorical_crossentropy", metrics=["accuracy"], steps_per_execution=spe)
    return model


def _mnist_like(n=32):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, 28, 28, 1)).astype(np.float32), keras.utils.to_categorical(np.arange(n) % 10, 10)


@pytest.mark.parametrize("mode", ["train", "test", "predict"])
def test_the_tutorial_cnn_lowers_from_shapes_to_the_same_executable(mode, monkeypatch):
    configure(1)
    model = _tutorial_cnn()
    x, y = _mnist_like()
    {
        "train": lambda: model.fit(x, y, batch_size=8, verbose=0),
        "test": lambda: model.evaluate(x, y, batch_size=8, verbose=0),
        "predict": lambda: model.predict(x, batch_size=8, verbose=0),
    }[mode]()
    weights = model.get_weights()
    _assert_same_executable(*_compile_both(model, mode, monkeypatch), model, mode)
    assert all(np.array_equal(a, b) for a, b in zip(weights, model.get_weights()))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # fp16's real numerics overflow on random data
@pytest.mark.parametrize("policy", ["float32", "mixed_float16"])
def test_a_residual_network_with_batch_norm_lowers_from_shapes_to_the_same_executable(policy, monkeypatch):
    configure(1)
    mixed_precision.set_global_policy(policy)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = bench_shape_only.resnet(blocks=(1, 1), image=32, classes=10, width=8)
        model.compile("sgd", "sparse_categorical_crossentropy", steps_per_execution=2)
    rng = np.random.default_rng(1)
    model.fit(rng.normal(size=(16, 32, 32, 3)).astype(np.float32), np.arange(16) % 10, batch_size=4, verbose=0)
    moving = [w.data.copy() for w in model.weights if "moving" in w.name]
    state = keras.backend.rng().bit_generator.state
    real, shaped = _compile_both(model, "train", monkeypatch)
    _assert_same_executable(real, shaped, model, "train")
    assert {rec[0] for rec in shaped.graph.signature} >= {"Conv2D", "BatchNorm", "Add", "MaxPool2D", "Pad"}
    assert set(shaped.graph.itemsizes) == ({2, 4} if policy == "mixed_float16" else {4})
    assert all(np.array_equal(a, w.data) for a, w in zip(moving, [w for w in model.weights if "moving" in w.name]))
    assert keras.backend.rng().bit_generator.state == state  # no dropout mask or statistic drawn


def test_a_pipelined_model_lowers_from_shapes_to_the_same_stages(monkeypatch):
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn(stages=True))
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
    x, y = _mnist_like()
    model.fit(x, y, batch_size=4, verbose=0)
    real, shaped = _compile_both(model, "train", monkeypatch)
    assert len(shaped.pipeline.stage_graphs) == 2
    _assert_same_executable(real, shaped, model, "train")


def test_replicas_with_accumulation_lower_from_shapes_to_the_same_executable(monkeypatch):
    configure(2)
    model = ipu_model(steps_per_execution=4, accumulation=2)
    x, y = data(64)
    model.fit(x, y, batch_size=4, verbose=0)
    _assert_same_executable(*_compile_both(model, "train", monkeypatch), model, "train")


def _text_model(mask_zero):
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(5,))
        x = keras.layers.Embedding(20, 4, mask_zero=mask_zero)(inputs)
        x = keras.layers.LSTM(3)(x)
        model = keras.Model(inputs, keras.layers.Dense(2, activation="softmax")(x))
        model.compile("sgd", "categorical_crossentropy")
    x = np.random.default_rng(0).integers(0, 20, size=(8, 5)).astype(np.float32)
    model.fit(x, keras.utils.to_categorical(np.arange(8) % 2, 2), batch_size=4, verbose=0)
    return model


def test_an_embedding_and_lstm_lower_from_shapes_to_the_same_executable(monkeypatch):
    configure(1)
    model = _text_model(mask_zero=False)
    _assert_same_executable(*_compile_both(model, "train", monkeypatch), model, "train")


def test_a_mask_from_the_inputs_values_is_lowered_by_running_the_step():
    configure(1)
    model = _text_model(mask_zero=True)  # the mask is which tokens are 0: values a trace does not have
    setup = model.device_executor.prepared["train"].setup
    assert shape_only.trace_step(model, "train", setup.x, setup.y) is None
    real, _ = executor.compile_executable(model, setup, shape_only=False)
    assert executor.compile_executable(model, setup, shape_only=True)[0].explain() == real.explain()


def test_a_layer_that_reads_values_is_lowered_by_running_it_instead(monkeypatch):
    configure(1)
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=(6,))
        scaled = keras.layers.Lambda(lambda t: t * float(np.asarray(t).max()))(inputs)
        model = keras.Model(inputs, keras.layers.Dense(3, activation="softmax")(scaled))
        model.compile("sgd", "categorical_crossentropy")
    x, y = data(16)
    model.fit(x, y, batch_size=4, verbose=0)
    setup = model.device_executor.prepared["train"].setup
    assert shape_only.trace_step(model, "train", setup.x, setup.y) is None
    real, _ = executor.compile_executable(model, setup, shape_only=False)
    shaped, _ = executor.compile_executable(model, setup, shape_only=True)  # falls back: the same program
    assert shaped.explain() == real.explain()


@pytest.mark.parametrize("connection", ["PRE_COMPILE", "NEVER"])
def test_compile_only_connections_lower_from_shapes(connection, monkeypatch):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.device_connection.type = getattr(ipu.config.DeviceConnectionType, connection)
    config.configure_ipu_system()
    model = _tutorial_cnn()
    monkeypatch.setattr(lowering, "_record_step", _no_real_run)
    x, y = _mnist_like()
    model.fit(x, y, batch_size=8, verbose=0)
    model.evaluate(x, y, batch_size=8, verbose=0)
    assert model.get_ipu_executable("train").graph.micro_batch == 8


def test_a_program_that_runs_is_lowered_from_its_real_micro_batch(monkeypatch):
    configure(1)
    model = _tutorial_cnn()
    ran = []
    real_record = lowering._record_step
    monkeypatch.setattr(lowering, "_record_step", lambda *args: ran.append(args[1]) or real_record(*args))
    x, y = _mnist_like()
    model.fit(x, y, batch_size=8, verbose=0)
    assert ran == ["train"]


def test_allow_out_of_memory_lowers_from_shapes(monkeypatch):
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", '{"debug.allowOutOfMemory": "true"}')
    configure(1, tiles_per_ipu=4)
    model = ipu_model(hidden=512)
    monkeypatch.setattr(lowering, "_record_step", _no_real_run)
    x, y = data(256)
    with pytest.raises(ipu.out_of_memory.CannotRunOutOfMemoryError, match="compiled with debug.allowOutOfMemory"):
        model.fit(x, y, batch_size=256, verbose=0)
    assert model.get_ipu_executable("train").out_of_memory is not None


def test_estimate_gives_the_figures_of_the_program_fit_compiles():
    configure(2)
    model = ipu_model(steps_per_execution=4, accumulation=2)
    sizing = ipu.utils.estimate(model, batch_size=8)
    assert (sizing.replicas, sizing.accumulation, sizing.micro_batch, sizing.steps_per_execution) == (2, 2, 8, 4)
    x, y = data(64)
    model.fit(x, y, batch_size=8, verbose=0)
    fitted = model.get_ipu_executable("train")
    assert sizing.executable.explain() == fitted.explain()
    assert sizing.seconds_per_execution == fitted.seconds_per_execution
    assert sizing.compile_seconds == fitted.compile_seconds
    assert sizing.seconds_per_step == fitted.seconds_per_execution / 4
    assert sizing.samples_per_second == 8 * 2 * 4 / fitted.seconds_per_execution
    assert np.array_equal(sizing.tile_bytes[0], fitted.graph.tile_memory()) and sizing.fits
    assert sizing.memory_by_category["variables"] == sum(
        int(m.per_tile.sum()) for m in fitted.graph.memory if m.category == "variables"
    )
    assert "2 replica(s) of 1 IPU(s), accumulation 2" in str(sizing) and "(fits)" in str(sizing)


def test_estimate_sizes_a_pipeline_per_stage_and_predict_without_labels():
    configure(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn(stages=True))
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
    sizing = ipu.utils.estimate(model, batch_size=4)
    assert (sizing.ipus_per_replica, sizing.replicas, len(sizing.tile_bytes)) == (2, 1, 2)
    for mode in ("test", "predict"):  # evaluate's program (a loss, no backward) and predict's (no labels)
        assert ipu.utils.estimate(model, batch_size=4, mode=mode).executable.graph.mode == mode


def test_a_model_too_big_for_the_host_is_sized_without_allocating_its_weights():
    configure(1)
    tracemalloc.start()
    try:
        with ipu.utils.shape_only_weights():
            model = keras.Sequential([keras.layers.Dense(20_000, activation="relu", input_shape=(20_000,))])
            model.add(keras.layers.Dense(10, activation="softmax"))
        model.compile("sgd", "categorical_crossentropy")
        sizing = ipu.utils.estimate(model, batch_size=1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kernel_bytes = 20_000 * 20_000 * 4
    assert peak < kernel_bytes / 8  # neither the 1.6 GB kernel nor an 82 MB activation of the batch was made
    assert sizing.memory_by_category["variables"] >= kernel_bytes and not sizing.fits
    assert "does NOT fit" in str(sizing)
    x = shape_only.placeholder((1024, 20_000))
    with pytest.raises(ValueError, match="built inside ipu.utils.shape_only_weights.*not run; build it outside"):
        model.predict(x, batch_size=1024, verbose=0)  # on the CPU


def test_a_model_without_weight_values_compiles_only():
    configure(1)
    with ipu.utils.shape_only_weights():
        model = ipu_model()
    x, y = data(16)
    with pytest.raises(ValueError, match="built inside ipu.utils.shape_only_weights.*can be compiled and sized"):
        model.fit(x, y, batch_size=4, verbose=0)
    assert model.get_ipu_executable("train").graph.micro_batch == 4  # compiled from shapes before the refusal


def test_estimate_says_what_to_change():
    configure(1)
    model = _tutorial_cnn()
    with pytest.raises(ValueError, match="mode must be one of 'train', 'test', 'predict', got 'fit'"):
        ipu.utils.estimate(model, 8, mode="fit")
    with pytest.raises(ValueError, match="batch_size must be a positive integer .*got 0"):
        ipu.utils.estimate(model, 0)
    with pytest.raises(ValueError, match="not built yet"):
        ipu.utils.estimate(keras.Sequential([keras.layers.Dense(2)]), 8, mode="predict")
    with pytest.raises(RuntimeError, match="You must compile your model"):
        ipu.utils.estimate(keras.Model(*tutorial_model_fn()), 8)
    assert ipu.utils.estimate(keras.Model(*tutorial_model_fn()), 8, mode="predict").fits  # predict needs no compile
