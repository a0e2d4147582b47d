"""Host I/O on the simulated IPU: synthetic data (TF_POPLAR_FLAGS), I/O tiles (IPUConfig.io_tiles) and
the infeed queue's prefetch depth. Times are compared with the same model's own timeline, never with
numbers written down here."""

import numpy as np
import pytest
from ipu_test_helpers import assert_same_weights, configure, cpu_model, data, fit, ipu_model

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.ipu.preparation import IPURuleError

X, Y = data(256)
BATCH = 32
SPE = 8


def _executable(flags="", monkeypatch=None, **io_tiles):
    if monkeypatch is not None:
        monkeypatch.setenv("TF_POPLAR_FLAGS", flags)
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    for name, value in io_tiles.items():
        setattr(config.io_tiles, name, value)
    config.configure_ipu_system()
    model = ipu_model(steps_per_execution=SPE)
    fit(model, X, Y, BATCH)
    return model, model.get_ipu_executable("train")


def _stream_seconds(executable, kinds):
    timeline = executable.timeline
    rows = [r for r, kind in enumerate(timeline.kinds) if kind in kinds]
    cycles = sum(int(timeline.superstep_cycles()[r]) * int(timeline.counts[r]) for r in rows)
    return cycles / timeline.spec.clock_hz


def test_synthetic_data_removes_exactly_the_host_streams(monkeypatch):
    _, real = _executable("", monkeypatch)
    _, synthetic = _executable("--use_synthetic_data", monkeypatch)
    streams = _stream_seconds(real, ("host->device", "device->host"))
    assert streams > 0
    assert _stream_seconds(synthetic, ("host->device", "device->host")) == 0
    assert real.seconds_per_execution - synthetic.seconds_per_execution == pytest.approx(streams, rel=1e-9)


def test_synthetic_categories_choose_the_streams(monkeypatch):
    _, real = _executable("", monkeypatch)
    _, outfeed_only = _executable("--synthetic_data_categories=outfeed", monkeypatch)
    assert _stream_seconds(outfeed_only, ("device->host",)) == 0
    assert _stream_seconds(outfeed_only, ("host->device",)) == _stream_seconds(real, ("host->device",))


def test_synthetic_inputs_replace_the_dataset_as_the_initializer_says(monkeypatch):
    """With a constant initializer the IPU trains on that constant: the CPU trained on the same
    constant data ends with the same weights; without synthetic data the weights differ."""
    model, _ = _executable("--use_synthetic_data --synthetic_data_initializer=0.25", monkeypatch)
    reference = cpu_model()
    fit(reference, np.full_like(X, 0.25), np.full_like(Y, 0.25), BATCH)
    assert_same_weights(model, reference)
    trained_on_data = cpu_model()
    fit(trained_on_data, X, Y, BATCH)
    assert not np.allclose(trained_on_data.get_weights()[0], model.get_weights()[0])


def test_outfeed_only_synthetic_keeps_the_numerics(monkeypatch):
    model, _ = _executable("--synthetic_data_categories=outfeed", monkeypatch)
    reference = cpu_model()
    fit(reference, X, Y, BATCH)
    assert_same_weights(model, reference)


def test_synthetic_data_is_announced(monkeypatch, capsys):
    _executable("--use_synthetic_data", monkeypatch)
    said = capsys.readouterr().out
    assert "TF_POPLAR_FLAGS asks for synthetic data" in said and "losses and weights mean nothing" in said


@pytest.mark.parametrize(
    "flags, fragment",
    [
        ("--synthetic_data_categories=infeed,weights", "unknown synthetic data category 'weights'"),
        ("--synthetic_data_categories", "comma-separated list"),
        ("--use_synthetic_data --synthetic_data_initializer=zeros", "must be 'uniform', 'normal' or a number"),
    ],
)
def test_bad_synthetic_flags_say_what_to_write(monkeypatch, flags, fragment):
    with pytest.raises(ValueError, match=fragment):
        _executable(flags, monkeypatch)


def test_io_tiles_hide_the_transfer_behind_the_compute(monkeypatch):
    _, plain = _executable("", monkeypatch)
    _, overlapped = _executable("", monkeypatch, num_io_tiles=32, place_ops_on_io_tiles=True)
    assert overlapped.graph.spec.tiles == plain.graph.spec.tiles - 32
    assert overlapped.seconds_per_execution < plain.seconds_per_execution
    assert _stream_seconds(overlapped, ("host->device", "device->host")) == 0  # all hidden by the compute


def test_too_many_io_tiles_slow_the_compute(monkeypatch):
    _, few = _executable("", monkeypatch, num_io_tiles=32, place_ops_on_io_tiles=True)
    _, most = _executable("", monkeypatch, num_io_tiles=1_400, place_ops_on_io_tiles=True)
    compute = [_stream_seconds(e, ("compute",)) for e in (few, most)]
    assert compute[1] > compute[0]


def test_io_tiles_need_place_ops_on_io_tiles(monkeypatch):
    _, plain = _executable("", monkeypatch)
    _, unused = _executable("", monkeypatch, num_io_tiles=32)
    assert unused.seconds_per_execution == plain.seconds_per_execution
    with pytest.raises(ValueError, match="num_io_tiles is 0"):
        configure_with(place_ops_on_io_tiles=True)
    with pytest.raises(ValueError, match="expected a whole number from 0 to 1471"):
        configure_with(num_io_tiles=1472, place_ops_on_io_tiles=True)


def configure_with(**io_tiles):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    for name, value in io_tiles.items():
        setattr(config.io_tiles, name, value)
    config.configure_ipu_system()


def test_io_tiles_must_hold_the_streamed_tensors():
    configure_with(num_io_tiles=1, place_ops_on_io_tiles=True, io_tile_available_memory_proportion=0.001)
    model = ipu_model(steps_per_execution=SPE)
    with pytest.raises(ValueError, match=r"set IPUConfig.io_tiles.num_io_tiles to at least \d+"):
        fit(model, X, Y, BATCH)


def test_io_tiles_with_a_pipeline_are_refused():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 2
    config.io_tiles.num_io_tiles = 32
    config.io_tiles.place_ops_on_io_tiles = True
    config.configure_ipu_system()
    with ipu.ipu_strategy.IPUStrategy().scope():
        inputs = keras.Input(shape=X.shape[1:])
        with keras.ipu.PipelineStage(0):
            x = keras.layers.Dense(8, activation="relu")(inputs)
        with keras.ipu.PipelineStage(1):
            outputs = keras.layers.Dense(Y.shape[1], activation="softmax")(x)
        model = keras.Model(inputs, outputs)
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        with pytest.raises(IPURuleError, match="io_tiles.num_io_tiles = 0"):
            model.fit(X, Y, batch_size=BATCH, verbose=0)


@pytest.mark.parametrize("depth", [0, -1, 2.0, "4", True])
def test_prefetch_depth_must_be_a_positive_whole_number(depth):
    configure()
    model = ipu_model()
    with pytest.raises(ValueError, match="prefetch_depth must be a positive whole number"):
        model.set_infeed_queue_options(prefetch_depth=depth)


def test_prefetch_depth_does_not_change_the_simulated_time(monkeypatch):
    """The simulated host has every batch ready before the IPU asks (see set_infeed_queue_options)."""
    _, default = _executable("", monkeypatch)
    configure()
    model = ipu_model(steps_per_execution=SPE)
    model.set_infeed_queue_options(prefetch_depth=4)
    fit(model, X, Y, BATCH)
    assert model.get_ipu_executable("train").seconds_per_execution == default.seconds_per_execution
