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


@pytest.mark.parametrize("method", ["fit", "evaluate", "predict"])
def test_a_batch_larger_than_the_data_advises_a_batch_size_that_divides_it(method):
    """Was: 'Keep the first 0 samples (x = x[:0])'."""
    x, y = data(48)
    configure(1)
    model = ipu_model()
    args = (x, y) if method != "predict" else (x,)
    with pytest.raises(
        ipu.IPURuleError,
        match=r"The data has 48 samples, which is not divisible by the batch size 64: .* so its only partial batch "
        r"\(48 samples\) cannot run\. Use a batch size that divides 48, such as 16, 24, 48, or more data$",
    ):
        getattr(model, method)(*args, batch_size=64, verbose=0)


@pytest.mark.parametrize("steps_per_execution", [2**20, 1])
def test_an_accumulation_longer_than_the_data_advises_an_accumulation_that_fits(steps_per_execution, capsys):
    """2**20 accumulated batches on 16 batches: the message used to advise the steps_per_execution already given
    (or one the data cannot fill)."""
    x, y = data(64)
    configure(1)
    model = ipu_model(steps_per_execution=steps_per_execution, accumulation=2**20)
    with pytest.raises(
        ipu.IPURuleError,
        match=rf"steps_per_execution={min(steps_per_execution, 16)} must be a multiple of "
        r"gradient_accumulation_steps_per_replica=1048576: every execution must end with a weight update, and no "
        r"multiple of 1048576 divides the 16 steps per epoch per replica \(fewer than one weight update needs\): "
        r"use gradient_accumulation_steps_per_replica=16 \(or another divisor of 16\), or give each replica a "
        r"multiple of 1048576 batches$",
    ):
        fit(model, x, y, 4)


def test_a_steps_per_execution_not_fitting_the_accumulation_advises_one_that_divides_the_steps():
    x, y = data(16 * 12)  # 12 batches
    configure(1)
    model = ipu_model(steps_per_execution=3, accumulation=2)
    with pytest.raises(
        ipu.IPURuleError,
        match=r"steps_per_execution=3 must be a multiple of gradient_accumulation_steps_per_replica=2: .*; use "
        r"steps_per_execution=2 \(a multiple of 2 that divides the 12 steps per replica\)$",
    ):
        fit(model, x, y, MICRO_BATCH)
