"""Runs a script unchanged with ``ipu-teach run`` in a new process, as a user would, for the tests of
tests/tf_scripts and tests/torch_scripts: the Poplar settings of the test's own process are left out."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_script(script: Path, *args, cwd, timeout: int, env_overrides=None):
    """The finished ``subprocess.CompletedProcess`` of ``ipu-teach run script args`` in ``cwd`` (with the
    environment variables of ``env_overrides`` set, e.g. a HOME of the test's own, or unset where None)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_POPLAR_FLAGS", "POPLAR_ENGINE_OPTIONS")}
    env["PYTHONPATH"] = str(REPO)
    for name, value in (env_overrides or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run(
        [sys.executable, "-m", "ipu_teach", "run", str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
