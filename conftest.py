"""Test-session set-up shared by the unit tests and the nbval notebook tests.

Notebook kernels are started by nbval as child processes and inherit this process's environment,
so everything that must hold inside a kernel is set in ``os.environ`` here, at import time, before
any kernel starts.
"""

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent

# The repo is importable from tests and from kernels (whose working directory is notebooks/),
# even when the package is not installed.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Hash seed, portable numerics (the same bits on every CPU), no Agg backend: set before ipu_teach's
# numerics are imported, and inherited by every kernel (ipu_teach/notebook_environment.py).
from ipu_teach.notebook_environment import notebook_environment  # noqa: E402

os.environ.clear()
os.environ.update(notebook_environment(repo_root=REPO_ROOT))

# Property tests draw the same examples on every run and machine (seeded randomness): a failure CI sees is
# one a developer can reproduce, and no run fails on an example no other run tried. No example database
# is written into the checkout.
try:
    from hypothesis import settings
except ImportError:  # hypothesis is in requirements/test.txt; without it the property tests are not collected
    pass
else:
    settings.register_profile("ipu-teach", derandomize=True, database=None, deadline=None)
    settings.load_profile("ipu-teach")


def pytest_configure(config):
    """Resolve a relative ``--nbval-sanitize-with`` path against the repo, so pytest runs from any folder."""
    sanitize_file = getattr(config.option, "nbval_sanitize_with", None)
    if sanitize_file and not os.path.isabs(sanitize_file) and not os.path.exists(sanitize_file):
        config.option.nbval_sanitize_with = str(REPO_ROOT / sanitize_file)
