# Predict, then check: availableMemoryProportion from 0.6 down to 0.05 for a Dense(512) on a 16-tile IPU.
import numpy as np

import ipu_teach.keras as keras
from ipu_teach import hardware, ipu


def fit_with(proportion):
    ipu.system.reset()
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = 1
    config.ipu_model.tiles_per_ipu = 16
    config.matmuls.poplar_options = {"availableMemoryProportion": proportion}
    config.configure_ipu_system()
    keras.backend.clear_session()
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential(
            [keras.layers.Dense(512, input_shape=(2048,)), keras.layers.Dense(10, activation="softmax")]
        )
        model.compile("sgd", "categorical_crossentropy")
        x, y = np.zeros((128, 2048), np.float32), keras.utils.to_categorical(np.zeros(128), 10)
        try:
            model.fit(x, y, batch_size=128, epochs=1, verbose=0)
        except ipu.ModelOutOfMemoryError as error:
            return f"out of memory (tile {error.tile} needs {error.needed:,} B)"
    executable = model.get_ipu_executable("train")
    graph = executable.graph
    temporary = max(int(m.per_tile.max()) for m in graph.memory if m.category == "temporary memory")
    device_us = (executable.seconds_per_execution - hardware.HOST.execution_overhead_s) * 1e6
    return (
        f"fits: {temporary:>7,} B temporary on the fullest tile, {graph.compute_sets:>3} compute sets, "
        f"{device_us:7.1f} us on the device per step"
    )


with ipu.system.restored_afterwards():                  # the notebook's IPU configuration is back afterwards
    for proportion in ("0.6", "0.3", "0.1", "0.05"):
        print(f"availableMemoryProportion {proportion:>4}: {fit_with(proportion)}")
# Less temporary memory means more serial passes: more compute sets (and compile time) and a slower step.
