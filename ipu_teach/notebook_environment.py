"""The environment notebook kernels run in, so that every machine prints what the committed notebooks show.

One place for the tests (conftest.py), the notebook re-execution tool and ``ipu-teach course``: sets of
strings print in hash order (a fixed PYTHONHASHSEED), and training is computed with portable numerics
(float64 sums rounded to float32: the same bits on every CPU, see ``ipu_teach/autograd/ops/portable.py``).
With MPLBACKEND=Agg a notebook's ``%matplotlib inline`` figures are never produced, so it is removed.
OpenBLAS' idle worker threads stop spinning almost at once (OPENBLAS_THREAD_TIMEOUT=4, unless set already): on a
2-core laptop a spinning thread takes the core the kernel needs, and training with two BLAS threads ran at half
the samples per second of this setting on a busy machine (benchmarks/README.md, issue 27). It changes no result.
"""

import os

REPRODUCIBLE = {"PYTHONHASHSEED": "0", "IPU_TEACH_PORTABLE_NUMERICS": "1"}


def notebook_environment(base=None, repo_root=None) -> dict:
    """``base`` (default: this process's environment) made reproducible for notebook kernels; with
    ``repo_root``, that folder first on PYTHONPATH so kernels import its ipu_teach."""
    env = dict(os.environ if base is None else base)
    env.update(REPRODUCIBLE)
    env.pop("MPLBACKEND", None)
    env.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # read when numpy loads OpenBLAS: set for the kernels
    if repo_root is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(repo_root)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(repo_root)]
        )
    return env
