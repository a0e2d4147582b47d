"""Every package of ipu_teach imports on its own, as the first import of a fresh process (a notebook's first
cell may be ``from ipu_teach import ipu`` or ``import ipu_teach.keras``): no import cycle depends on which
package a user imports first. Each runs in its own interpreter, since a cycle shows only from a clean start."""

import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "ipu_teach"
FIRST_IMPORTS = sorted(
    ["ipu_teach." + ".".join(path.parent.relative_to(PACKAGE).parts) for path in PACKAGE.glob("*/__init__.py")]
    + ["ipu_teach.keras.layers", "ipu_teach.keras.ipu", "ipu_teach.keras.metrics", "ipu_teach.keras.applications"]
)


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_a_package_imports_first_in_a_fresh_process(module):
    result = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
