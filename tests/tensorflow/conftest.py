"""Every test of the tf facade starts as a new process would: no IPUs attached, fresh names, the default seeds."""
import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)

    def clean():
        ipu.system.reset()
        keras.backend.clear_session()
        tf.random.set_seed(keras.backend.DEFAULT_SEED)

    clean()
    yield
    clean()
