"""Every IPU test starts as a new process would: no IPU system configured, the default IPU-POD16,
no executable cache, layer names from scratch and a fixed seed."""
import pytest

import ipu_teach.keras as keras
from ipu_teach import ipu


@pytest.fixture(autouse=True)
def fresh_ipu_session(monkeypatch):
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)

    def clean():
        ipu.system.reset()
        ipu.system.use_system(ipu.system.DEFAULT_SYSTEM)
        ipu.executable_cache.disable()
        keras.backend.clear_session()
        keras.utils.set_random_seed(0)

    clean()
    yield
    clean()
