"""kill -9 at random moments during ``model.save``, ``save_weights`` and a ``ModelCheckpoint`` whose file
names come from a pattern: every final file is complete, and no temporary file outlives the next save.

Each kill hits a fresh process forked from one that has imported ipu-teach and built the model (a
"zygote"), so 30 kills take a second or two rather than 30 interpreter starts. A child first finishes
one save (by then the temporary file the previous kill left, whatever its name, must be gone), says
"ready", and repeats its save until killed after a seeded random delay."""

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ipu_teach.keras as keras
from ipu_teach import atomic

ROOT = Path(__file__).resolve().parent.parent
KILLS_PER_KIND = 10
LONGEST_DELAY_SECONDS = 0.05

ZYGOTE = """
import os, sys, traceback
import numpy as np
import ipu_teach.keras as keras

folder = sys.argv[1]
model = keras.Sequential(
    [keras.layers.Dense(96, activation="relu", input_shape=(96,)), keras.layers.Dense(96, activation="relu"),
     keras.layers.Dense(10, activation="softmax")]
)
model.compile("adam", "sparse_categorical_crossentropy")
x = np.random.default_rng(0).normal(size=(64, 96)).astype("float32")
y = np.arange(64) % 10
model.fit(x, y, epochs=1, verbose=0)
epochs = iter(range(10**9))

def checkpoint():
    epoch = next(epochs)  # names never repeat (children start at their kill's number times 1000)
    pattern = os.path.join(folder, "ckpt-{epoch:02d}-{loss:.4f}.keras")
    model.fit(x, y, initial_epoch=epoch, epochs=epoch + 1, verbose=0,
              callbacks=[keras.callbacks.ModelCheckpoint(pattern)])

SAVES = {
    "save": lambda: model.save(os.path.join(folder, "model.keras")),
    "save_weights": lambda: model.save_weights(os.path.join(folder, "weights.npz")),
    "checkpoint": checkpoint,
}
print("zygote ready", flush=True)
for line in sys.stdin:
    kind, number = line.split()
    save = SAVES[kind]
    child = os.fork()
    if child == 0:
        epochs = iter(range(int(number) * 1000, 10**9))
        try:
            save()
            print(f"ready {os.getpid()}", flush=True)
            while True:
                save()
        except BaseException:
            traceback.print_exc()
            os._exit(1)
    _, status = os.waitpid(child, 0)  # reaped: a zombie would still count as a running writer
    print(f"reaped {os.WTERMSIG(status) if os.WIFSIGNALED(status) else -os.WEXITSTATUS(status)}", flush=True)
"""


def _temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(atomic.TEMPORARY_SUFFIX))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the processes it kills (POSIX)")
def test_thirty_kill_9_during_saves_leave_complete_files_and_no_temporary(tmp_path):
    rng = random.Random(19)
    kinds = ["save", "save_weights", "checkpoint"] * KILLS_PER_KIND
    rng.shuffle(kinds)
    single_threaded_blas = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    zygote = subprocess.Popen(
        [sys.executable, "-c", ZYGOTE, str(tmp_path)],
        cwd=ROOT,
        env={**os.environ, **single_threaded_blas},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the watchdog ends the zygote and any child at once
    )
    watchdog = threading.Timer(300, os.killpg, (zygote.pid, signal.SIGKILL))  # a hang fails, never blocks
    watchdog.start()
    left_behind = {kind: 0 for kind in set(kinds)}
    try:
        assert zygote.stdout.readline() == "zygote ready\n"
        litter = []
        for number, kind in enumerate(kinds):
            zygote.stdin.write(f"{kind} {number}\n")
            zygote.stdin.flush()
            ready = zygote.stdout.readline().split()
            assert ready[:1] == ["ready"], f"the {kind} child failed before its first save finished: {ready}"
            assert not set(litter) & set(_temporaries(tmp_path)), "the previous kill's temporary outlived a save"
            time.sleep(rng.uniform(0, LONGEST_DELAY_SECONDS))
            os.kill(int(ready[1]), signal.SIGKILL)
            assert zygote.stdout.readline() == f"reaped {signal.SIGKILL.value}\n", f"a {kind} save failed"
            litter = _temporaries(tmp_path)
            left_behind[kind] += bool(litter)
    except BaseException:
        os.killpg(zygote.pid, signal.SIGKILL)  # a failed check may leave a child saving for ever
        raise
    finally:
        watchdog.cancel()
        zygote.stdin.close()
        zygote.wait(timeout=300)
    print(f"kills that left a temporary file: {dict(sorted(left_behind.items()))} of {KILLS_PER_KIND} each")
    assert sum(left_behind.values()) > 0, "no kill landed during a write: the loop tested nothing"

    checkpoints = sorted(tmp_path.glob("ckpt-*.keras"))
    model = keras.models.load_model(tmp_path / "model.keras")
    for path in [tmp_path / "model.keras", *checkpoints]:
        loaded = keras.models.load_model(path)
        assert loaded.count_params() == model.count_params() == 96 * 96 * 2 + 96 * 2 + 96 * 10 + 10
        assert all(np.isfinite(w).all() for w in loaded.get_weights())
    model.load_weights(tmp_path / "weights.npz")
    assert len(checkpoints) >= KILLS_PER_KIND

    model.save_weights(tmp_path / "after.npz")  # the next save cleans what the last kill left
    assert _temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("ckpt-")) == [
        "after.npz",
        "model.keras",
        "weights.npz",
    ]
