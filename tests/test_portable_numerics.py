"""With portable numerics (on in the tests and notebooks), training gives the same bits whatever BLAS
kernel, thread count or SIMD code the CPU gets.

numpy's OpenBLAS picks a kernel per CPU and each sums in its own order; numpy's own exp/log/tanh
differ per instruction set. Portable numerics sum products and compute those functions in float64 and
round once (``autograd.ops.portable``), so notebooks print the same numbers on every machine. Each
setting runs in a fresh process (the environment is read when numpy and ipu_teach load).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

TRAIN = """
import hashlib, numpy as np
import ipu_teach.keras as keras
keras.utils.set_random_seed(0)
inputs = keras.Input(shape=(12, 12, 1))
x = keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu")(inputs)
x = keras.layers.Flatten()(x)
x = keras.layers.Dense(32, activation="tanh")(x)
model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x))
model.compile(keras.optimizers.SGD(0.1), "categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(1)
x_train = rng.random((256, 12, 12, 1), dtype=np.float32)
y_train = keras.utils.to_categorical(rng.integers(0, 10, 256), 10)
model.fit(x_train, y_train, batch_size=64, epochs=2, verbose=0)
print(hashlib.sha256(b"".join(w.tobytes() for w in model.get_weights())).hexdigest())
"""

SETTINGS = {
    "default": {},
    "OpenBLAS SkylakeX": {"OPENBLAS_CORETYPE": "SkylakeX"},
    "OpenBLAS Haswell": {"OPENBLAS_CORETYPE": "Haswell"},
    "OpenBLAS Sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge"},
    "1 thread": {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
}
# numpy's exp/log/tanh without AVX2 (an older or non-x86 CPU), where numpy can switch it off.
_dispatched = getattr(getattr(np, "_core", None), "_multiarray_umath", None)
if "X86_V3" in getattr(_dispatched, "__cpu_dispatch__", []):
    SETTINGS["numpy without AVX2/AVX-512"] = {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"}


def run(code, extra_env, portable="1"):
    """The last word ``code`` prints, run in a new Python with ``extra_env`` and portable numerics on or off."""
    done = start(code, extra_env, portable)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def start(code, extra_env, portable):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OPENBLAS_", "NPY_DISABLE", "OMP_NUM", "MKL_NUM"))
    }
    env.update(
        extra_env,
        IPU_TEACH_PORTABLE_NUMERICS=portable,
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]),
    )
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_training_gives_the_same_bits_on_every_blas_kernel_thread_count_and_simd_level():
    hashes = {name: run(TRAIN, env) for name, env in SETTINGS.items()}
    assert len(set(hashes.values())) == 1, hashes


def test_without_portable_numerics_the_kernels_train_differently():
    """Guards the test above: the settings do change float32 training on this machine (skipped where
    the BLAS ignores OPENBLAS_CORETYPE, as MKL or another CPU family does)."""
    hashes = {run(TRAIN, SETTINGS[name], portable="0") for name in ("OpenBLAS SkylakeX", "OpenBLAS Sandybridge")}
    if len(hashes) == 1:
        pytest.skip("this BLAS sums float32 products alike under both OPENBLAS_CORETYPE settings")
    assert len(hashes) == 2


@pytest.mark.parametrize("value", ["maybe", "2", "enabled"])
def test_a_switch_value_that_is_not_one_is_refused_by_name(value):
    done = start("import ipu_teach.keras", {}, portable=value)
    assert done.returncode != 0
    assert (
        f"ValueError: IPU_TEACH_PORTABLE_NUMERICS={value!r} is not a switch: set it to 1 (portable numerics: "
        "the same bits on every CPU, about twice as slow) or 0 (off, the default)"
    ) in done.stderr


def test_the_switch_is_on_in_the_tests_and_can_be_turned_from_python():
    from ipu_teach import autograd

    assert autograd.portable_numerics()  # conftest.py turns it on, for the notebooks' kernels too
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    try:
        autograd.set_portable_numerics(False)
        assert autograd.ops.portable.exp(x).dtype == np.float32
        with pytest.raises(TypeError, match="set_portable_numerics takes True or False, got 'no'"):
            autograd.set_portable_numerics("no")
    finally:
        autograd.set_portable_numerics(True)
    np.testing.assert_array_equal(autograd.ops.portable.exp(x), np.exp(x.astype(np.float64)).astype(np.float32))


def test_notebook_kernels_everywhere_get_the_same_environment(tmp_path):
    """Tests, the re-execution tool and `ipu-teach course` give kernels one environment (one helper)."""
    from ipu_teach.notebook_environment import notebook_environment

    env = notebook_environment({"MPLBACKEND": "Agg", "PYTHONPATH": "elsewhere", "HOME": "/h"}, repo_root=tmp_path)
    assert env["PYTHONHASHSEED"] == "0" and env["IPU_TEACH_PORTABLE_NUMERICS"] == "1"
    assert "MPLBACKEND" not in env and env["HOME"] == "/h"
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "elsewhere"]
    assert env["OPENBLAS_THREAD_TIMEOUT"] == "4"  # idle BLAS threads do not spin on a 2-core laptop
    assert notebook_environment({"OPENBLAS_THREAD_TIMEOUT": "28"})["OPENBLAS_THREAD_TIMEOUT"] == "28"  # a user's own
