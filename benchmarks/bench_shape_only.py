"""Lowering a ResNet-50 built from ipu-teach's layers at micro-batch 20: the real lowering (one micro-batch run
forward and backward in numpy) against the shape-only one (``ipu/shape_only.py``: traced from shapes, no numerics),
time and peak memory, and whether they give the same executable.

Each lowering runs in its own fresh process (so its peak resident memory is its own), compiling the training
program with ``ipu.executor.compile_executable`` on one Mk2 IPU, fp32 or fp16 (``--precision``). The child prints
its wall time, its peak resident memory (``ru_maxrss``) and a digest of the executable (its ``explain()`` text,
cycles per execution, compile time and tile memory); the parent prints both and their ratios, and whether the
digests are equal. No timed unit tests: this prints ratios, it asserts nothing.

The model is ``keras.applications.ResNet50(weights=None)``, built as tf-keras builds it (25,636,712 parameters;
tests/keras/test_applications.py checks it layer by layer against tf-keras).

Run:
    PYTHONPATH=. python benchmarks/bench_shape_only.py [--batch 20] [--precision float32|mixed_float16]
        [--skip-real]
"""

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def _child(batch: int, precision: str, shape_only: bool) -> dict:
    """Compile ResNet-50's training program once in this process; its time, peak memory and digest."""
    import numpy as np

    from ipu_teach import keras
    from ipu_teach.examples import configure_ipus
    from ipu_teach.ipu import executor
    from ipu_teach.ipu.shape_only import placeholder
    from ipu_teach.keras.engine.data_adapter import get_data_adapter

    configure_ipus(1)
    keras.mixed_precision.set_global_policy(precision)
    model = keras.applications.ResNet50(weights=None)
    model.compile("sgd", "sparse_categorical_crossentropy")
    adapter = get_data_adapter(placeholder((batch, 224, 224, 3)), np.zeros(batch, np.float32), batch)
    setup, _ = executor.prepare(model, "train", adapter)
    start = time.perf_counter()
    executable, _ = executor.compile_executable(model, setup, shape_only=shape_only, allow_out_of_memory=True)
    seconds = time.perf_counter() - start
    tiles = np.concatenate([executable.graph.tile_memory()]).tobytes()
    text = executable.explain() + repr((executable.timeline.total_cycles(), executable.compile_seconds))
    return {
        "seconds": seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "digest": hashlib.sha256(text.encode() + tiles).hexdigest(),
        "parameters": model.count_params(),
        "simulated_step_ms": executable.seconds_per_execution * 1e3,
        "fits": executable.out_of_memory is None,
    }


def _run(batch: int, precision: str, shape_only: bool) -> dict:
    command = [sys.executable, __file__, "--child", "--batch", str(batch), "--precision", precision]
    command += ["--shape-only"] if shape_only else []
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--precision", default="float32", choices=["float32", "mixed_float16"])
    parser.add_argument("--skip-real", action="store_true", help="lower shape-only alone (the real one takes minutes)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--shape-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.batch, args.precision, args.shape_only)))
        return
    shaped = _run(args.batch, args.precision, True)
    print(f"ResNet-50 ({shaped['parameters']:,} parameters), training, micro-batch {args.batch}, {args.precision}")
    print(f"simulated step {shaped['simulated_step_ms']:.2f} ms, fits in memory: {shaped['fits']}")
    print(f"shape-only lowering: {shaped['seconds']:7.1f} s, peak {shaped['peak_mib']:8,.0f} MiB")
    if args.skip_real:
        return
    real = _run(args.batch, args.precision, False)
    print(f"real lowering:       {real['seconds']:7.1f} s, peak {real['peak_mib']:8,.0f} MiB")
    print(
        f"shape-only / real: time {shaped['seconds'] / real['seconds']:.3f}, "
        f"peak memory {shaped['peak_mib'] / real['peak_mib']:.3f}; "
        f"same executable: {shaped['digest'] == real['digest']}"
    )


if __name__ == "__main__":
    main()
