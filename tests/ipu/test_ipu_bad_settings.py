"""Settings that used to be ignored or misread fail loudly: misspelled keywords and options, booleans
given as strings, IPU counts that are not whole numbers, TF_POPLAR_FLAGS cut at a space; and the
executable cache never stops training (a bad entry is a miss, an unwritable folder a warning)."""

import json
import os

import pytest
from ipu_test_helpers import build, configure, data, ipu_model

import ipu_teach
from ipu_teach import ipu, profiling

# ----- IPUConfig -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "group, name, value, error, message",
    [
        (
            None,
            "auto_select_ipus",
            2.0,
            TypeError,
            r"IPUConfig.auto_select_ipus must be a whole number .*"
            r"write e.g. IPUConfig.auto_select_ipus = 2",
        ),
        (None, "auto_select_ipus", True, TypeError, "must be a whole number"),
        (None, "select_ipus", "0", TypeError, "IPUConfig.select_ipus must be a whole number"),
        (None, "allow_recompute", "no", ValueError, r"IPUConfig.allow_recompute must be True or False, got 'no'"),
        ("profiling", "auto_report", "false", ValueError, r"IPUConfig.profiling.auto_report must be True or False"),
        ("profiling", "allow_out_of_memory", 1, ValueError, "allow_out_of_memory must be True or False, got 1"),
        ("device_connection", "type", "always", TypeError, r"must be an ipu.config.DeviceConnectionType \(ALWAYS"),
        ("ipu_model", "tiles_per_ipu", 4.0, TypeError, "tiles_per_ipu must be a whole number or None, got 4.0"),
        (None, "profiling", {}, AttributeError, r"IPUConfig.profiling is a group of options: set them one by one"),
    ],
)
def test_ipuconfig_refuses_values_of_the_wrong_kind(group, name, value, error, message):
    config = ipu.config.IPUConfig()
    with pytest.raises(error, match=message):
        setattr(getattr(config, group) if group else config, name, value)


# ----- keyword arguments forwarded to Graphcore's optimizer wrapper and pipeline -------------------


def test_a_misspelled_gradient_accumulation_keyword_is_an_error_naming_the_right_one():
    model = build()
    with pytest.raises(
        TypeError,
        match=r"set_gradient_accumulation_options\(\): unknown keyword argument "
        r"'gradient_accumulation_step_per_replica' \(did you mean "
        r"'gradient_accumulation_steps_per_replica'\?\)",
    ):
        model.set_gradient_accumulation_options(gradient_accumulation_step_per_replica=4)


@pytest.mark.parametrize(
    "keyword",
    [
        "gradient_accumulation_reduction_method",
        "use_v2_gradient_accumulation_optimizer",
        "offload_weight_update_variables",
        "replicated_optimizer_state_sharding",
        "dtype",
    ],
)
def test_graphcores_gradient_accumulation_keywords_are_all_accepted(keyword):
    build().set_gradient_accumulation_options(**{keyword: "mean" if "reduction" in keyword else False})


@pytest.mark.parametrize(
    "method, keyword, message",
    [
        (
            "set_gradient_accumulation_options",
            "num_mini_batches",
            "Set the `gradient_accumulation_steps_per_replica` argument to `set_gradient_accumulation_options`",
        ),
        ("set_gradient_accumulation_options", "opt", "automatically wrapped"),
        ("set_pipelining_options", "gradient_accumulation_count", "Set the `gradient_accumulation_steps_per_replica`"),
        ("set_pipelining_options", "infeed_queue", "automatically set by Keras"),
        ("set_pipelining_options", "outfeed_mask", "not compatible with Keras"),
    ],
)
def test_keywords_keras_sets_itself_get_graphcores_messages(method, keyword, message):
    with pytest.raises(ValueError, match=message):
        getattr(build(), method)(**{keyword: 1})


def test_a_misspelled_pipelining_keyword_is_an_error():
    with pytest.raises(
        TypeError,
        match=r"unknown keyword argument 'pipeline_shedule' \(did you mean "
        r"'pipeline_schedule'\?\)",
    ):
        build().set_pipelining_options(pipeline_shedule=None)


# ----- TF_POPLAR_FLAGS -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flags, expected",
    [
        ("--executable_cache_path='/tmp/my cache'", "/tmp/my cache"),
        ('--show_progress_bar=false --executable_cache_path="/tmp/my \\"odd\\" cache"', '/tmp/my "odd" cache'),
        ("  --use_ipu_model --executable_cache_path=/tmp/plain  ", "/tmp/plain"),
    ],
)
def test_tf_poplar_flags_are_parsed_as_graphcores_tensorflow_parses_them(flags, expected, monkeypatch):
    monkeypatch.setenv("TF_POPLAR_FLAGS", flags)
    assert ipu.executable_cache.cache_path() == expected


@pytest.mark.parametrize(
    "flags, message",
    [
        (
            "--executable_cache_path=/tmp/my cache",
            r"'cache' is not a --flag=value; a value holding spaces must be "
            r"quoted, e.g. --executable_cache_path='/tmp/my cache'",
        ),
        (
            "--executable_cache_pth=/tmp/c",
            r"unknown flag --executable_cache_pth \(did you mean 'executable_cache_path'",
        ),
    ],
)
def test_bad_tf_poplar_flags_stop_with_what_to_write(flags, message, monkeypatch):
    monkeypatch.setenv("TF_POPLAR_FLAGS", flags)
    with pytest.raises(ValueError, match=message):
        ipu.executable_cache.cache_path()


# ----- POPLAR_ENGINE_OPTIONS -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, message",
    [
        ({"autoReport.al": "true"}, r"unknown option 'autoReport.al' \(did you mean 'autoReport.all'\?\)"),
        ({"autoReport.all": "no"}, r"POPLAR_ENGINE_OPTIONS 'autoReport.all' must be true or false .*got 'no'"),
        ({"debug.allowOutOfMemory": "1"}, "'debug.allowOutOfMemory' must be true or false"),
        ({"autoReport.directory": ""}, "'autoReport.directory' must be a folder name"),
    ],
)
def test_bad_poplar_engine_options_are_errors(options, message, monkeypatch):
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps(options))
    configure()
    with pytest.raises(ValueError, match=message):
        profiling.engine_options(ipu.system.current())


def test_false_and_poplars_other_options_are_read_as_written(monkeypatch):
    monkeypatch.setenv(
        "POPLAR_ENGINE_OPTIONS",
        json.dumps({"autoReport.all": "false", "debug.instrument": "true", "debug.allowOutOfMemory": True}),
    )
    configure()
    options = profiling.engine_options(ipu.system.current())
    assert not options.auto_report and options.allow_out_of_memory


# ----- the executable cache never stops training -----------------------------------------------------


def fit_once(capsys, epochs=1):
    x, y = data(64)
    configure()
    model = ipu_model(steps_per_execution=4)
    capsys.readouterr()
    model.fit(x, y, batch_size=16, epochs=epochs, verbose=0)
    return capsys.readouterr().out, model.get_ipu_executable("train")


@pytest.mark.parametrize("entry", ["null", "[]", '{"format": "ipu-teach-executable/1"}', "{not json"])
def test_a_bad_cache_entry_is_a_miss_compiled_again_and_replaced(entry, capsys, tmp_path):
    ipu.executable_cache.enable(tmp_path)
    fit_once(capsys)
    [path] = tmp_path.glob("*.json")
    path.write_text(entry, encoding="utf-8")
    out, executable = fit_once(capsys)
    assert not executable.from_cache
    assert f"The executable cache entry {path} is not valid" in out and "compiling again and replacing it" in out
    assert ipu.executable_cache.is_valid_entry(json.loads(path.read_text()), path.stem)
    assert fit_once(capsys)[1].from_cache


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("deep JSON", "its JSON nests 100,000 levels deep, more than the 100 allowed"),
        ("FIFO", "it is a FIFO (named pipe), not a regular file"),
        ("symlink to /dev/zero", "it is a device, not a regular file"),
        ("over 16 MiB", "it holds 16,777,217 bytes, more than the 16,777,216 allowed"),
    ],
)
def test_an_entry_deep_a_fifo_a_device_or_too_big_is_a_miss_read_no_further(kind, reason, capsys, tmp_path, fifo):
    ipu.executable_cache.enable(tmp_path)
    fit_once(capsys)
    [path] = tmp_path.glob("*.json")
    path.unlink()
    if kind == "deep JSON":
        path.write_text("[" * 100_000 + "]" * 100_000)  # Python's parser would raise RecursionError
    elif kind == "FIFO":
        fifo(path)  # opened the usual way, it would wait for a writer forever
    elif kind == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")  # read the usual way, it never ends
    else:
        with open(path, "wb") as sparse:
            sparse.truncate(ipu.executable_cache.MAX_ENTRY_BYTES + 1)
    out, executable = fit_once(capsys)
    assert not executable.from_cache
    assert f"The executable cache entry {path} is not valid ({reason}): compiling again and replacing it" in out
    assert path.is_file() and not path.is_symlink()  # the link is replaced, not written through
    assert ipu.executable_cache.is_valid_entry(json.loads(path.read_text()), path.stem)
    assert fit_once(capsys)[1].from_cache


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a folder this user cannot write")
def test_a_read_only_cache_folder_warns_once_and_training_goes_on(capsys, tmp_path):
    _read_only_cache(capsys, tmp_path)


def test_an_unwritable_cache_folder_warns_once_and_training_goes_on(capsys, tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    ipu.executable_cache.enable(blocker / "cache")  # cannot be created: its parent is a file (root too)
    out, first = fit_once(capsys)
    assert out.count(f"WARNING:ipu_teach:Cannot write to the executable cache {blocker / 'cache'}") == 1
    assert "training goes on, but executables will not be cached" in out
    x, y = data(64)
    model = ipu_model(steps_per_execution=4, hidden=6)
    model.fit(x, y, batch_size=16, verbose=0)
    assert "Cannot write" not in capsys.readouterr().out  # said once


def _read_only_cache(capsys, tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o555)
    ipu.executable_cache.enable(folder)
    out, executable = fit_once(capsys, epochs=2)
    assert "Cannot write to the executable cache" in out and not executable.from_cache


# ----- reset_session ---------------------------------------------------------------------------------


def test_reset_session_resets_every_process_wide_setting(tmp_path):
    import numpy as np

    import ipu_teach.keras as keras
    from ipu_teach.data import Dataset

    ipu.system.use_system("IPU-POD64")
    configure(64)
    ipu.executable_cache.enable(tmp_path)
    keras.layers.Dense(2)
    keras.utils.set_random_seed(9)
    fresh_order = None
    with profiling.auto_report(tmp_path):
        ipu_teach.reset_session()
        fresh_order = list(Dataset.from_tensor_slices(np.arange(8)).shuffle(8))
        assert not ipu_teach.session.runtime.report_overrides  # the block's setting is gone too
    assert ipu.system.current() is None and ipu.system.system_name() == "IPU-POD16"
    assert ipu.executable_cache.cache_path() is None and profiling.written_reports() == []
    assert keras.layers.Dense(2).name == "dense"
    assert keras.backend.rng().random() == np.random.default_rng(keras.backend.DEFAULT_SEED).random()
    ipu_teach.reset_session()
    assert list(Dataset.from_tensor_slices(np.arange(8)).shuffle(8)) == fresh_order


def test_set_random_seed_also_fixes_unseeded_dataset_shuffles():
    import numpy as np

    import ipu_teach.keras as keras
    from ipu_teach.data import Dataset

    def order(seed):
        keras.utils.set_random_seed(seed)
        return [int(v) for v in Dataset.from_tensor_slices(np.arange(32)).shuffle(32)]

    assert order(5) == order(5) and order(5) != order(6)
    with pytest.raises(ValueError, match="the seed must be an integer >= 0, got 1.5"):
        keras.utils.set_random_seed(1.5)


def test_clear_session_keeps_the_ipu_runtime_as_graphcores_tensorflow_does(tmp_path):
    import ipu_teach.keras as keras

    configure(2)
    ipu.executable_cache.enable(tmp_path)
    keras.layers.Dense(2)
    keras.backend.clear_session()
    assert ipu.system.current().num_ipus == 2 and ipu.executable_cache.cache_path() == str(tmp_path)
    assert keras.layers.Dense(2).name == "dense"
