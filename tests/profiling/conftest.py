"""Fresh Keras session and IPU system per test; `trained`: the small CNN fitted with reports on."""
import pytest

import ipu_teach.keras as keras
from ipu_teach import ipu, profiling
from profiling_helpers import configure, fit


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    yield
    keras.backend.clear_session()
    ipu.system.reset()


@pytest.fixture
def trained(tmp_path):
    """(model, report) of the small CNN trained with reports on."""
    configure()
    with profiling.auto_report(tmp_path / "report"):
        model = fit()
    return model, profiling.open_report(profiling.last_report_path())
