"""PRE_COMPILE and NEVER connections compile (and fill the executable cache) but never run."""

import numpy as np
import pytest
from ipu_test_helpers import data, ipu_model

from ipu_teach import ipu


@pytest.mark.parametrize(
    "connection", [ipu.config.DeviceConnectionType.PRE_COMPILE, ipu.config.DeviceConnectionType.NEVER]
)
def test_compile_only_connections_leave_the_weights_alone(connection, tmp_path, capsys):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.device_connection.type = connection
    config.configure_ipu_system()
    ipu.executable_cache.enable(tmp_path)
    model = ipu_model(steps_per_execution=4)
    before = model.get_weights()
    x, y = data(64)
    model.fit(x, y, batch_size=16, verbose=0)
    predictions = model.predict(x, batch_size=16, verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert predictions.shape == (64, 3) and not predictions.any()
    assert f"device_connection.type is {connection.name}" in capsys.readouterr().out
    assert list(tmp_path.glob("*.json")), "the compiled executables should still reach the cache"


def test_always_runs_and_trains():
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.configure_ipu_system()
    model = ipu_model(steps_per_execution=4)
    before = model.get_weights()
    x, y = data(64)
    model.fit(x, y, batch_size=16, verbose=0)
    assert not all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
