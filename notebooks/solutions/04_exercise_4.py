# Exercise 4 (solution): Flatten, four Dense(256) layers and the output layer on 2 IPUs. The first
# hidden layer (784 inputs) costs more than the others, the output layer little; the fastest cut is the
# one whose two stages cost about the same, since in the main phase every step waits for the slower stage.
import contextlib
import io

import numpy as np

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.widgets.pipeline import PipelineExplorer, draw_pipeline


def model_fn():
    inputs = keras.Input(shape=(28, 28, 1))
    x = keras.layers.Flatten()(inputs)
    for _ in range(4):
        x = keras.layers.Dense(256, activation="relu")(x)
    return inputs, keras.layers.Dense(10, activation="softmax")(x)


config = ipu.config.IPUConfig()
config.auto_select_ipus = 2
config.device_connection.type = ipu.config.DeviceConnectionType.PRE_COMPILE  # compile only: fast
config.configure_ipu_system()
x, y = np.zeros((512, 28, 28, 1), np.float32), np.zeros((512, 10), np.float32)

stage_us, step_us, models = {}, {}, {}
print(f"{'layers on stage 0':>17} {'stage 0 (us)':>12} {'stage 1 (us)':>12} {'step (us)':>10}   (simulated)")
for cut in range(1, 6):
    with ipu.ipu_strategy.IPUStrategy().scope(), contextlib.redirect_stdout(io.StringIO()):
        model = keras.Model(*model_fn())
        model.set_pipeline_stage_assignment([0 if n < cut else 1 for n in range(6)])
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=8)
        model.compile(optimizer="sgd", loss="categorical_crossentropy", steps_per_execution=8)
        model.fit(x, y, epochs=1, batch_size=64)
    models[cut] = model
    run = model.get_ipu_executable("train").pipeline
    stage_us[cut] = [(f + b) * 1e6 for f, b in zip(run.costs.forward, run.costs.backward)]
    step_us[cut] = run.seconds / 8 * 1e6
    print(f"{cut:>17} {stage_us[cut][0]:>12.1f} {stage_us[cut][1]:>12.1f} {step_us[cut]:>10.1f}")
best = min(step_us, key=step_us.get)
print(f"fastest: {best} layers on stage 0 (Flatten and {best - 1} Dense), the most balanced cut")

# The explorer of the fastest cut: each stage's compute and the activations it stashes
explorer = PipelineExplorer.from_model(models[best])
figure, view = draw_pipeline("Grouped", accumulation=8, costs=explorer.costs, sizes=explorer.sizes, unit="simulated us")
for stage, (busy, stash) in enumerate(zip(view.metrics.utilisation_per_ipu, view.stash_per_ipu)):
    compute = explorer.costs.forward[stage] + explorer.costs.backward[stage]
    print(
        f"stage {stage}: forward + backward {compute:5.1f} us per micro-batch, busy {busy:.0%}, stashes {stash:.2f} MB"
    )
