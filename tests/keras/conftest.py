"""Every Keras test starts from a fresh session: layer names from scratch and a fixed seed."""
import pytest

import ipu_teach.keras as keras


@pytest.fixture(autouse=True)
def fresh_session():
    keras.backend.clear_session()
    keras.utils.set_random_seed(0)
    yield
    keras.backend.clear_session()
