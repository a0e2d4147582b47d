"""Every test of the tf facade starts as a new process would: no IPUs attached, fresh names, the default seeds."""

import pytest

import ipu_teach.keras as keras
import ipu_teach.tensorflow as tf
from ipu_teach import ipu


def _as_new():
    ipu.system.reset()
    keras.backend.clear_session()
    tf.random.set_seed(keras.backend.DEFAULT_SEED)


@pytest.fixture(autouse=True)
def fresh_session():
    _as_new()
    yield
    _as_new()
