# Exercise 4 (solution): Flatten, four Dense(256) layers and the output layer on 2 IPUs. The first
# hidden layer (784 inputs) costs more than the others, the output layer little; the fastest cut is the
# one whose two stages cost about the same, since in the main phase every step waits for the slower stage.
# The notebook's IPUs are back afterwards, and its names (model_fn, best, figure...) are left alone.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.widgets.pipeline import PipelineExplorer, draw_pipeline


def dense_model_fn():
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Flatten()(inputs)
    for _ in range(4):
        x = keras.layers.Dense(256, activation="relu")(x)
    return inputs, keras.layers.Dense(10, activation="softmax")(x)


zero_images, zero_labels = np.zeros((512, 28, 28, 1), np.float32), np.zeros((512, 10), np.float32)
stage_us, step_us, dense_models = {}, {}, {}
with ipu.system.restored_afterwards():
    two_ipus = ipu.config.IPUConfig()
    two_ipus.auto_select_ipus = 2
    two_ipus.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE   # compile only: fast
    two_ipus.configure_ipu_system()
    print(f"{'layers on stage 0':>17} {'stage 0 (us)':>12} {'stage 1 (us)':>12} {'step (us)':>10}   (simulated)")
    for layers_on_stage_0 in range(1, 6):
        with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
            dense_model = keras.Model(*dense_model_fn())
            dense_model.set_pipeline_stage_assignment([0 if n < layers_on_stage_0 else 1 for n in range(6)])
            dense_model.set_pipelining_options(gradient_accumulation_steps_per_replica=8)
            dense_model.compile(optimizer="sgd", loss="categorical_crossentropy", steps_per_execution=8)
            dense_model.fit(zero_images, zero_labels, epochs=1, batch_size=64)
        dense_models[layers_on_stage_0] = dense_model
        dense_run = dense_model.get_ipu_executable("train").pipeline
        stage_us[layers_on_stage_0] = [(f + b) * 1e6 for f, b in zip(dense_run.costs.forward, dense_run.costs.backward)]
        step_us[layers_on_stage_0] = dense_run.seconds / 8 * 1e6
        print(f"{layers_on_stage_0:>17} {stage_us[layers_on_stage_0][0]:>12.1f} {stage_us[layers_on_stage_0][1]:>12.1f} "
              f"{step_us[layers_on_stage_0]:>10.1f}")
fastest_cut = min(step_us, key=step_us.get)
print(f"fastest: {fastest_cut} layers on stage 0 (Flatten and {fastest_cut - 1} Dense), the most balanced cut")

# The explorer of the fastest cut: each stage's compute and the activations it stashes
explorer = PipelineExplorer.from_model(dense_models[fastest_cut])
balanced_figure, balanced_view = draw_pipeline("Grouped", accumulation=8, costs=explorer.costs, sizes=explorer.sizes,
                                               unit="simulated us")
for stage_index, (stage_busy, stage_stash) in enumerate(zip(balanced_view.metrics.utilisation_per_ipu,
                                                            balanced_view.stash_per_ipu)):
    compute = explorer.costs.forward[stage_index] + explorer.costs.backward[stage_index]
    print(f"stage {stage_index}: forward + backward {compute:5.1f} us per micro-batch, busy {stage_busy:.0%}, "
          f"stashes {stage_stash:.2f} MB")
