"""Test-session set-up shared by the unit tests and the nbval notebook tests.

Notebook kernels are started by nbval as child processes and inherit this process's environment,
so everything that must hold inside a kernel is set in ``os.environ`` here, at import time, before
any kernel starts.
"""

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent

# Sets of strings print in hash order; a fixed seed keeps notebook outputs comparable.
os.environ["PYTHONHASHSEED"] = "0"
# Outputs must be the same bits on every CPU (BLAS kernel, thread count, SIMD level): float64 sums and
# functions, rounded to float32 (ipu_teach/autograd/ops/portable.py). Set before ipu_teach is imported.
os.environ["IPU_TEACH_PORTABLE_NUMERICS"] = "1"
# With MPLBACKEND=Agg a notebook's `%matplotlib inline` figures are never produced.
os.environ.pop("MPLBACKEND", None)

# The repo is importable from tests and from kernels (whose working directory is notebooks/),
# even when the package is not installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)


def pytest_configure(config):
    """Resolve a relative ``--nbval-sanitize-with`` path against the repo, so pytest runs from any folder."""
    sanitize_file = getattr(config.option, "nbval_sanitize_with", None)
    if sanitize_file and not os.path.isabs(sanitize_file) and not os.path.exists(sanitize_file):
        config.option.nbval_sanitize_with = str(REPO_ROOT / sanitize_file)
