"""Re-execute course notebooks in place, so their committed outputs are what strict nbval compares.

Runs each notebook top to bottom in a fresh ``python3`` kernel, as the tests do: PYTHONHASHSEED=0,
IPU_TEACH_PORTABLE_NUMERICS=1, MPLBACKEND unset, this repo first on PYTHONPATH, the notebook's
folder as working directory; tracebacks are saved relative to the repository. Cell
metadata is cleared except ``tags`` (``raises-exception``, ``nbval-ignore-output`` must survive);
notebook metadata keeps only ``kernelspec``, ``language_info`` and ``widgets``. A notebook that fails
is left untouched, and the exit status is non-zero.

    python tools/execute_notebooks.py                     # every notebooks/*.ipynb
    python tools/execute_notebooks.py notebooks/NAME.ipynb ...
"""

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
from ipu_teach.atomic import atomic_write  # noqa: E402
from ipu_teach.notebook_environment import notebook_environment  # noqa: E402

KERNEL_NAME = "python3"
TIMEOUT_SECONDS = 600
KEPT_CELL_METADATA = ("tags",)
KEPT_NOTEBOOK_METADATA = ("kernelspec", "language_info", "widgets")
PYTHON3_KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": KERNEL_NAME}


def kernel_environment():
    """The environment a kernel gets: the caller's, made reproducible and able to import ipu_teach."""
    return notebook_environment(repo_root=REPO_ROOT)


def prepare(notebook):
    """Drop stale outputs and metadata, so the saved file holds only what this run produced."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata = nbformat.from_dict(
                {key: cell.metadata[key] for key in KEPT_CELL_METADATA if key in cell.metadata}
            )
    # Old widget state would outlive widgets this run no longer makes; execution re-adds the current one.
    notebook.metadata.pop("widgets", None)
    if notebook.metadata.get("kernelspec", {}).get("name") != KERNEL_NAME:
        notebook.metadata["kernelspec"] = dict(PYTHON3_KERNELSPEC)


def without_machine_paths(notebook):
    """Tracebacks name the files of the package by absolute path (/home/you/ipu-teach/ipu_teach/...):
    the committed notebook shows them relative to the repository, the same on every machine."""
    prefix = str(REPO_ROOT) + os.sep
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                output["traceback"] = [line.replace(prefix, "") for line in output["traceback"]]


def keep_notebook_metadata(notebook):
    notebook.metadata = nbformat.from_dict(
        {key: notebook.metadata[key] for key in KEPT_NOTEBOOK_METADATA if key in notebook.metadata}
    )


def write_atomically(notebook, path):
    """Write to a temporary file beside `path`, then replace it, so an interrupted run never truncates it."""
    with atomic_write(path) as stream:
        nbformat.write(notebook, stream)


def execute_notebook(path):
    """Execute one notebook in place; if a cell fails, times out or kills the kernel, raise and leave the file."""
    notebook = nbformat.read(path, as_version=4)
    prepare(notebook)
    client = NotebookClient(
        notebook,
        timeout=TIMEOUT_SECONDS,
        kernel_name=KERNEL_NAME,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=kernel_environment())
    without_machine_paths(notebook)
    keep_notebook_metadata(notebook)
    write_atomically(notebook, path)


def notebook_paths(names):
    if not names:
        return sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    paths = [Path(name).resolve() for name in names]
    missing = [str(path) for path in paths if path.suffix != ".ipynb" or not path.is_file()]
    if missing:
        raise SystemExit(f"execute_notebooks: not a notebook file: {', '.join(missing)}")
    return paths


def notebook_arguments(argv, description):
    """The notebook files a command line names (every notebooks/*.ipynb if none); shared with time_notebooks.py."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("notebooks", nargs="*", help="notebook files (default: every notebooks/*.ipynb)")
    return notebook_paths(parser.parse_args(argv).notebooks)


def main(argv=None):
    paths = notebook_arguments(argv, __doc__.splitlines()[0])
    if not paths:
        print("execute_notebooks: no notebooks to execute")
        return 0
    failed = []
    for path in paths:
        start = time.perf_counter()
        try:
            execute_notebook(path)
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as error:
            failed.append(path.name)
            print(f"FAILED {path.name} after {time.perf_counter() - start:.1f} s (file left unchanged):\n{error}")
        else:
            print(f"executed {path.name} in {time.perf_counter() - start:.1f} s")
    if failed:
        print(f"{len(failed)} of {len(paths)} notebooks failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
