"""Every test starts as a new Python process would: ``ipu_teach.reset_session()`` (layer names, seeds,
no IPU system configured, the default IPU-POD16, no executable cache, no report capture) and no
TF_POPLAR_FLAGS / POPLAR_ENGINE_OPTIONS from the environment. One fixture, so no test depends on
which tests ran before it in the same worker."""

import pytest

import ipu_teach


@pytest.fixture(autouse=True)
def fresh_session(monkeypatch):
    monkeypatch.delenv("TF_POPLAR_FLAGS", raising=False)
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)
    ipu_teach.reset_session()
    yield
    ipu_teach.reset_session()
