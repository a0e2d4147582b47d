"""Profiling reports for the widget tests, built once per module (each takes a second or two)."""

import numpy as np
import pytest


def dense_report(directory, tiles):
    """The report of two Dense layers trained on ``tiles`` tiles (None: a whole Mk2 IPU), wide enough that the
    first layer's matmul is a long step."""
    from ipu_teach import ipu, keras, profiling
    from ipu_teach.examples import configure_ipus

    configure_ipus(1, tiles_per_ipu=tiles)
    try:
        with profiling.auto_report(directory), ipu.ipu_strategy.IPUStrategy().scope():
            model = keras.Sequential(
                [keras.layers.Dense(256, input_shape=(64,), activation="relu"), keras.layers.Dense(2)]
            )
            model.compile("sgd", "mse", steps_per_execution=2)
            model.fit(np.ones((128, 64), np.float32), np.ones((128, 2), np.float32), batch_size=64, verbose=0)
        return profiling.open_report(profiling.last_report_path())
    finally:
        ipu.system.reset()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The two Dense layers on 16 tiles."""
    return dense_report(tmp_path_factory.mktemp("report"), 16)


@pytest.fixture(scope="module")
def reports(report, tmp_path_factory):
    """On 16 tiles and on a whole Mk2 IPU (1,472 tiles: four-digit tile numbers on the axes)."""
    return [report, dense_report(tmp_path_factory.mktemp("report"), None)]
