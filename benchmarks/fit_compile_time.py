"""Fits the compile-time constants of ``hardware.HostSpec`` to the Keras tutorial's compile times, and only to them.

The model (``ipu_teach.ipu.compile_time``): seconds = base + a x (working tile-steps + tensor windows + tensor
regions) + b x program tile-steps. A tensor window and a tensor region are costed as a vertex (a working
tile-step) is: the tutorial's compiles are one model, whose windows and tensors grow with its vertices, so they
cannot tell the three rates apart.
The calibration figures are the tutorial's eight compilations (``../shared/seeds/keras-tutorial-how-to-run-on-ipu.txt``,
the same logs bench_fidelity's calibration table uses): Keras prints each first epoch's time with the compilation
in it, so a compile time is the first epoch's seconds less the epoch's run time (the next epoch's logged time;
an evaluation's run is its step count times the logged step time). Keras rounds to whole seconds, so each figure
is +-0.5 s. The fit minimises the relative error (least squares weighted by 1 / figure). Run it after any change
to the lowering that changes the graphs' sizes, and copy the constants it prints into ``hardware.HostSpec``:
    PYTHONPATH=. python benchmarks/fit_compile_time.py
It then prints the fit beside the check set: published compile times beyond the tutorial (other models, PopTorch,
ResNet-50, a 4-IPU pipeline; fidelity_cases.json's compile figures with 'check_set'), which nothing is fitted to.
Not a test; takes about a minute.
"""

from __future__ import annotations

import numpy as np

from benchmarks import fidelity_cases
from ipu_teach import hardware
from ipu_teach.ipu import compile_time

TUTORIAL = dict(model="keras_tutorial_cnn", batch=64, optimizer={"name": "sgd"}, loss="categorical_crossentropy")
CALIBRATION = [
    # (name, compile seconds, derivation, the case as fidelity_cases.compile_case takes it)
    (
        "train, 1 step per execution",
        35 - 3,
        "line 204: 35s first epoch; line 207: 3s per epoch",
        dict(mode="train", steps_per_execution=1),
    ),
    (
        "evaluate, 1 step per execution",
        14 - 156 * 3e-3,
        "line 216: 156 steps, 14s at 3ms/step",
        dict(mode="test", steps_per_execution=1),
    ),
    (
        "train, whole epoch",
        30 - 937 * 175e-6,
        "line 286: 30s; line 288: 175us/step",
        dict(mode="train", steps_per_execution=937),
    ),
    ("evaluate, whole test set", 14, "line 293: 14s (run under 0.1 s)", dict(mode="test", steps_per_execution=156)),
    (
        "train, 2 replicas",
        31 - 468 * 226e-6,
        "line 359: 31s; line 361: 226us/step",
        dict(mode="train", steps_per_execution=468, replicas=2),
    ),
    (
        "evaluate, 2 replicas",
        14,
        "line 366: 14s (run under 0.1 s)",
        dict(mode="test", steps_per_execution=78, replicas=2),
    ),
    (
        "train, pipelined on 2 IPUs",
        36 - 936 * 212e-6,
        "line 479: 36s; line 481: 212us/step",
        dict(mode="train", steps_per_execution=936, pipeline_stages=2, accumulation=8),
    ),
    (
        "evaluate, pipelined on 2 IPUs",
        17,
        "line 488: 17s (run under 0.1 s)",
        dict(mode="test", steps_per_execution=152, pipeline_stages=2, accumulation=8),
    ),
]


def _graph_size(executable):
    stages = None if executable.pipeline is None else executable.pipeline.stage_graphs
    return compile_time.graph_size(executable.graph, stages)


def sizes():
    for name, seconds, derivation, case in CALIBRATION:
        yield name, seconds, derivation, _graph_size(fidelity_cases.compile_case({**TUTORIAL, **case}))


def check_set():
    """The published compile times beyond the Keras tutorial that a fit is checked on, not fitted to (the compile
    figures with 'check_set' in fidelity_cases.json): (case id, seconds, graph size). A sizing case's program is
    the one ``ipu.utils.estimate`` traces at its published configuration."""
    for case in fidelity_cases.load():
        for figure in case["figures"]:
            if figure["kind"] == "compile_time" and "check_set" in figure:
                executable = (
                    fidelity_cases.size(case).executable
                    if case["set"] == "sizing"
                    else fidelity_cases.compile_case(case["ipu_teach"])
                )
                yield case["id"], figure["real"], _graph_size(executable)


def graph_elements(size) -> int:
    """The counts charged at a vertex's rate: working tile-steps, tensor windows and tensor regions."""
    return size.working_tile_steps + size.tensor_windows + size.tensor_regions


def features(size) -> np.ndarray:
    """What each fitted constant multiplies: 1 (the fixed part), the graph's elements and its program tile-steps."""
    return np.array([1.0, graph_elements(size), size.program_tile_steps])


def main():
    rows = list(sizes())
    matrix = np.array([features(s) for *_, s in rows])
    real = np.array([seconds for _, seconds, _, _ in rows])
    weights = 1 / real
    constants, *_ = np.linalg.lstsq(matrix * weights[:, None], real * weights, rcond=None)
    if (constants < 0).any():
        raise SystemExit(f"a negative constant {constants}: the model does not fit these figures")
    base, per_working, per_program = constants
    print(f"compile_base_s = {base:.2f}")
    print(f"compile_s_per_working_tile_step = {per_working:.3g}")
    print(f"compile_s_per_tensor_window = {per_working:.3g}")
    print(f"compile_s_per_tensor_region = {per_working:.3g}")
    print(f"compile_s_per_program_tile_step = {per_program:.3g}")
    host = hardware.HOST
    print(
        f"\n{'calibration compile':<34} {'working':>8} {'windows':>8} {'regions':>8} {'program':>8} {'real':>6} "
        f"{'fit':>6} {'current':>8}"
    )
    for (name, seconds, derivation, size), row in zip(rows, matrix):
        print(
            f"{name:<34} {size.working_tile_steps:>8,} {size.tensor_windows:>8,} {size.tensor_regions:>8,} "
            f"{size.program_tile_steps:>8,} {seconds:>5.1f}s "
            f"{row @ constants:>5.1f}s {host.compile_seconds(size):>7.1f}s  ({derivation})"
        )
    print(
        f"\n{'check set (not fitted)':<38} {'working':>9} {'windows':>9} {'regions':>9} {'program':>9} "
        f"{'real':>6} {'fit':>6}"
    )
    fitted = []
    for name, seconds, size in check_set():
        estimate = features(size) @ constants
        fitted.append(estimate / seconds)
        print(
            f"{name:<38} {size.working_tile_steps:>9,} {size.tensor_windows:>9,} {size.tensor_regions:>9,} "
            f"{size.program_tile_steps:>9,} {seconds:>5.0f}s {estimate:>5.0f}s  {estimate / seconds:.2f}x"
        )
    within = sum(1 / 1.5 <= r <= 1.5 for r in fitted)
    print(f"check set: {within} of {len(fitted)} within 1.5x of the fit")


if __name__ == "__main__":
    main()
