"""Running a notebook's exercise solutions in a test, as a learner's ``%load`` runs them: in the namespace of the
notebook's defining cells (imports, data, helpers; not its long runs), the IPUs left as the notebook had them."""

import runpy
from pathlib import Path

import nbformat

from ipu_teach import ipu

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def defining_namespace(notebook_name: str, defining_cells: tuple) -> dict:
    """The names the code cells of ``notebook_name`` starting with ``defining_cells`` define (magics left out)."""
    notebook = nbformat.read(NOTEBOOKS / notebook_name, as_version=4)
    cells = [c.source for c in notebook.cells if c.cell_type == "code" and c.source.startswith(defining_cells)]
    assert len(cells) == len(defining_cells)  # the notebook still defines what the solutions use
    names = {}
    for source in cells:
        exec("\n".join(line for line in source.splitlines() if not line.startswith("%")), names)
    return names


def run_solution(name: str, namespace: dict, capsys) -> str:
    """What solution ``name`` prints, run in ``namespace``; fails if it leaves the IPUs configured otherwise."""
    before = ipu.system.current()
    runpy.run_path(str(NOTEBOOKS / "solutions" / name), init_globals=namespace, run_name="__main__")
    assert ipu.system.current() is before  # the notebook's IPUs are back
    return capsys.readouterr().out
