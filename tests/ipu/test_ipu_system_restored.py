"""ipu.system.restored_afterwards: an experiment inside a notebook leaves the notebook's IPUs configured as
they were (notebooks' exercise solutions use it; tests/test_notebook_solutions_roundtrip.py checks them)."""

import numpy as np
import pytest
from ipu_test_helpers import configure, data, ipu_model

from ipu_teach import ipu


def test_the_configuration_before_the_block_is_back_and_the_notebook_model_still_trains():
    configure(1)
    before = ipu.system.current()
    with ipu.system.restored_afterwards():
        ipu.system.use_system("IPU-POD64")
        ipu.utils.reset_ipu_seed(7)
        ipu.host.simulate_input_pipeline(1_000, overlapped=False)
        config = ipu.config.IPUConfig()
        config.auto_select_ipus = 32
        config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE
        config.configure_ipu_system()
        assert ipu.system.current().num_ipus == 32 and not ipu.system.current().runs
    assert ipu.system.current() is before
    assert ipu.system.system_name() == "IPU-POD16"
    assert ipu.host.input_pipeline_rate() is None and ipu.host.input_pipeline_overlapped()
    configure(1)  # the seed of stochastic rounding is back at 0 too: a new configuration's generator starts there
    assert ipu.system.current().rounding_rng.integers(1 << 30) == np.random.default_rng(0).integers(1 << 30)
    model = ipu_model(steps_per_execution=4)
    weights = model.get_weights()
    x, y = data(64)
    model.fit(x, y, batch_size=16, verbose=0)  # runs: the block's PRE_COMPILE is gone
    assert any(not np.array_equal(a, b) for a, b in zip(weights, model.get_weights()))


def test_a_block_that_raises_or_resets_still_restores():
    configure(2)
    before = ipu.system.current()
    with pytest.raises(ValueError, match="powers of two"):
        with ipu.system.restored_afterwards():
            ipu.system.reset()
            config = ipu.config.IPUConfig()
            config.auto_select_ipus = 3
            config.configure_ipu_system()
    assert ipu.system.current() is before


def test_nothing_configured_before_means_nothing_configured_after():
    with ipu.system.restored_afterwards():
        configure(4)
    assert ipu.system.current() is None
