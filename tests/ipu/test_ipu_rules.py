"""The IPU's Keras rules: each broken rule is an error that says what to change."""

import pytest
from ipu_test_helpers import configure, data, fit, ipu_model, lines_with

from ipu_teach import ipu

MICRO_BATCH = 16


def test_a_partial_batch_in_fit_names_the_samples_to_keep():
    x, y = data(250)
    configure(1)
    model = ipu_model()
    with pytest.raises(ipu.IPURuleError, match=r"250 samples.*batch size 16.*first 240 samples.*x\[:240\]"):
        fit(model, x, y, MICRO_BATCH)


@pytest.mark.parametrize("method", ["evaluate", "predict"])
def test_a_partial_batch_in_evaluate_and_predict_is_refused_too(method):
    x, y = data(250)
    configure(1)
    model = ipu_model()
    args = (x, y) if method == "evaluate" else (x,)
    with pytest.raises(ipu.IPURuleError, match=r"partial batch \(10 samples\).*first 240"):
        getattr(model, method)(*args, batch_size=MICRO_BATCH, verbose=0)


def test_steps_per_execution_must_divide_the_steps_per_replica():
    x, y = data(256)  # 16 batches: 8 per replica on 2 replicas
    configure(2)
    model = ipu_model(steps_per_execution=3)
    with pytest.raises(
        ipu.IPURuleError,
        match=r"steps_per_execution=3 must divide .*\(8 = 16 batches / 2 replica"
        r".*divisor such as 1, 2, 4, 8",
    ):
        fit(model, x, y, MICRO_BATCH)


def test_steps_per_execution_that_divides_the_steps_per_replica_runs():
    x, y = data(256)
    configure(2)
    history = fit(ipu_model(steps_per_execution=4), x, y, MICRO_BATCH)
    assert len(history.history["loss"]) == 1


def test_steps_per_execution_must_be_a_multiple_of_the_accumulation():
    x, y = data(256)
    configure(1)
    model = ipu_model(steps_per_execution=2, accumulation=4)
    with pytest.raises(
        ipu.IPURuleError,
        match=r"steps_per_execution=2 must be a multiple of "
        r"gradient_accumulation_steps_per_replica=4.*steps_per_execution=4",
    ):
        fit(model, x, y, MICRO_BATCH)


def test_batches_not_divisible_by_the_replicas_are_dropped_with_a_warning(capsys):
    x, y = data(240)  # 15 batches on 2 replicas
    configure(2)
    fit(ipu_model(), x, y, MICRO_BATCH)
    warnings = lines_with(capsys.readouterr().out, "WARNING:")
    assert len(warnings) == 1
    assert "number of batches (15) is not divisible by the number of replicas (2)" in warnings[0]
    assert "last 1 batch(es) will be dropped" in warnings[0]


def test_batches_divisible_by_the_replicas_give_no_warning(capsys):
    x, y = data(256)
    configure(2)
    fit(ipu_model(), x, y, MICRO_BATCH)
    assert not lines_with(capsys.readouterr().out, "WARNING:")


@pytest.mark.parametrize("count,hint", [(3, "select 2 or 4 IPUs"), (6, "select 4 or 8 IPUs")])
def test_auto_select_ipus_must_be_a_power_of_two(count, hint):
    with pytest.raises(ValueError, match=f"auto_select_ipus={count}: multi-IPU devices come in powers of two; {hint}"):
        configure(count)


def test_more_ipus_than_the_system_has_is_refused_with_the_bigger_system_named():
    with pytest.raises(
        ValueError,
        match=r"asks for 32 IPUs but the simulated system \(an IPU-POD16\) has 16.*"
        r"use_system\('IPU-POD64'\)",
    ):
        configure(32)
    ipu.system.use_system("IPU-POD64")
    assert configure(32).auto_select_ipus == 32
    assert ipu.system.current().num_ipus == 32


def test_select_ipus_out_of_range_names_the_valid_device_ids():
    config = ipu.config.IPUConfig()
    config.select_ipus = [31]  # a Pod16 has devices 0-30
    with pytest.raises(ValueError, match=r"device 31 does not exist.*device IDs 0 to 30"):
        config.configure_ipu_system()


def test_select_ipus_picks_the_device_of_that_size():
    config = ipu.config.IPUConfig()
    config.select_ipus = [16]  # the first pair
    config.configure_ipu_system()
    assert ipu.system.current().num_ipus == 2


def test_auto_select_ipus_and_select_ipus_together_are_refused():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.select_ipus = [0]
    with pytest.raises(ValueError, match="either auto_select_ipus or select_ipus, not both"):
        ipu.config.configure_ipu_system(config)


@pytest.mark.parametrize(
    "group,name,close",
    [
        (None, "auto_select_ipu", "auto_select_ipus"),
        ("ipu_model", "tiles_per_ipus", "tiles_per_ipu"),
        ("device_connection", "typ", "type"),
    ],
)
def test_an_unknown_ipu_config_option_names_the_closest_one(group, name, close):
    config = ipu.config.IPUConfig()
    target = config if group is None else getattr(config, group)
    with pytest.raises(AttributeError, match=f"no option '{name}'. Did you mean '{close}'"):
        setattr(target, name, 1)


def test_a_model_in_a_strategy_whose_system_was_never_configured_says_how_to_configure_it():
    x, y = data(64)
    model = ipu_model()
    with pytest.raises(RuntimeError, match=r"has not been configured.*auto_select_ipus = 1.*configure_ipu_system"):
        fit(model, x, y, MICRO_BATCH)


def test_reset_forgets_the_configuration_and_the_bigger_system():
    ipu.system.use_system("IPU-POD64")
    configure(64)
    ipu.system.reset()
    assert ipu.system.current() is None
    assert ipu.system.system_name() == "IPU-POD16"
