"""A loaded solution leaves the notebook as it found it.

A learner runs a notebook, pastes an exercise's solution (``%load``, then runs it) and goes back to an
earlier section. If the solution rebound one of the notebook's names (``model_fn``, ``batch_size``,
``simulated_step_seconds``) or left the IPUs configured its own way (``PRE_COMPILE``: training then
silently trains nothing), the notebook's cells now print something else. So, in one kernel, each
notebook runs: its cells; then each solution it points to, each followed by a check that no name of the
notebook was rebound and that the IPU runtime state (configured IPUs, system, executable cache, precision
policy, Poplar's environment variables) is what it was; then its cells again, whose outputs must equal the
first run's (masked as strict nbval masks them: tests/nbval_sanitize.cfg).

Between the runs only the Keras session is cleared (layer and model names count up in any Keras session
that builds models again; a fresh kernel starts them at zero, which the first run had).
"""

import copy
import json
import re
from pathlib import Path

import nbformat
import pytest
from helpers.scripts import load_script
from nbclient import NotebookClient
from nbval.plugin import coalesce_streams, get_sanitize_patterns

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO_ROOT / "notebooks"
SANITIZE_FILE = REPO_ROOT / "tests" / "nbval_sanitize.cfg"
execute_notebooks = load_script("tools/execute_notebooks.py")

PROBLEMS_MARK = "ROUNDTRIP-PROBLEMS:"

# Run in the kernel after the notebook's first run: what the notebook defined, and the runtime state.
# Names start with an underscore so that they are not taken for the notebook's own.
SNAPSHOT = """
import os as _os
from ipu_teach import ipu as _ipu
from ipu_teach.ipu import executable_cache as _executable_cache
from ipu_teach.keras import mixed_precision as _mixed_precision


def _runtime_state():
    return {
        "configured IPUs": _ipu.system.current(),
        "simulated system": _ipu.system.system_name(),
        "executable cache": _executable_cache.cache_path(),
        "precision policy": _mixed_precision.global_policy().name,
        **{name: _os.environ.get(name) for name in ("TF_POPLAR_FLAGS", "POPLAR_ENGINE_OPTIONS")},
    }


_ip = get_ipython()
_notebook_names = {
    name: value for name, value in _ip.user_ns.items() if not name.startswith("_") and name not in _ip.user_ns_hidden
}
_notebook_state = _runtime_state()
"""

# Run after each solution: report what it changed, then put the notebook's names back so that each
# solution is judged on its own.
CHECK = f"""
_problems = [
    f"rebinds the notebook's `{{name}}`"
    for name, value in _notebook_names.items()
    if name not in _ip.user_ns or _ip.user_ns[name] is not value
]
_now = _runtime_state()
_problems += [
    f"leaves the {{what}} changed: {{_now[what]!r}} instead of {{before!r}}"
    for what, before in _notebook_state.items()
    if _now[what] is not before and _now[what] != before
]
_ip.user_ns.update(_notebook_names)
print("{PROBLEMS_MARK}", __import__("json").dumps(_problems))
"""

CLEAR_KERAS_SESSION = "import ipu_teach.keras as _keras\n_keras.backend.clear_session()"


def solutions_of(notebook):
    """The solution files the notebook's markdown points to with ``%load``, in order, without repeats."""
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    return list(dict.fromkeys(re.findall(r"%load (solutions/[\w.]+\.py)", text)))


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]


def new_code_cell(source, metadata=None):
    return nbformat.v4.new_code_cell(source, metadata=dict(metadata or {}))


def masked(text):
    """``text`` as strict nbval compares it (wall-clock masks), with the kernel's cell counter masked too."""
    for regex, replace in get_sanitize_patterns(SANITIZE_FILE.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return re.sub(r"(Cell In|In )\[\d+\]", r"\1[N]", text)


def shown(cell):
    """What a cell showed, as nbval compares it: each stream's text (chunks joined, progress bars' carriage
    returns applied), the text/plain of results and displays, errors."""
    shown_outputs = []
    for output in coalesce_streams(copy.deepcopy(cell.outputs)):
        if output.output_type == "stream":
            shown_outputs.append((output.name, output.text))
        elif output.output_type in ("execute_result", "display_data"):
            shown_outputs.append((output.output_type, output.data.get("text/plain", "")))
        elif output.output_type == "error":
            shown_outputs.append(("error", f"{output.ename}: {output.evalue}"))
    return [(kind, masked(text)) for kind, text in shown_outputs]


def round_trip(path):
    """Execute the notebook, its solutions (each checked) and the notebook again in one kernel; return the
    first run's cells, the second run's cells and {solution: problems}."""
    notebook = nbformat.read(path, as_version=4)
    solutions = solutions_of(notebook)
    # fresh cells (new ids) with the notebook's sources and tags (`raises-exception` cells may raise)
    first, second = ([new_code_cell(cell.source, cell.metadata) for cell in code_cells(notebook)] for _ in range(2))
    checks = {}
    cells = [*first, new_code_cell(SNAPSHOT)]
    for solution in solutions:
        checks[solution] = new_code_cell(CHECK)
        cells += [new_code_cell((path.parent / solution).read_text(encoding="utf-8")), checks[solution]]
    cells += [new_code_cell(CLEAR_KERAS_SESSION), *second]
    run = nbformat.v4.new_notebook(cells=cells, metadata=notebook.metadata)
    NotebookClient(
        run, timeout=600, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(path.parent)}}
    ).execute(env=execute_notebooks.kernel_environment())
    problems = {}
    for solution, check in checks.items():
        printed = "".join(output.get("text", "") for output in check.outputs)
        line = next(line for line in printed.splitlines() if PROBLEMS_MARK in line)
        problems[solution] = json.loads(line.split(PROBLEMS_MARK, 1)[1])
    return first, second, problems


COURSE = sorted(NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("path", COURSE, ids=[path.stem for path in COURSE])
def test_every_notebook_points_to_its_own_solutions_with_load(path):
    solutions = solutions_of(nbformat.read(path, as_version=4))
    assert solutions, f"{path.name} points to no solution"
    for solution in solutions:
        assert solution.startswith(f"solutions/{path.name[:2]}_"), solution
        assert (NOTEBOOKS / solution).is_file(), f"{path.name} loads {solution}, which does not exist"
    # `%load` only pastes the code into the cell: every pointer to a solution says that a second run executes it
    markdown = "\n".join(
        cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"
    )
    for line in markdown.splitlines():
        if "%load" in line:
            assert "run the cell again" in line, f"{path.name}: {line}"


@pytest.mark.slow
@pytest.mark.parametrize("path", COURSE, ids=[path.stem for path in COURSE])
def test_solutions_leave_the_notebook_as_they_found_it(path):
    first, second, problems = round_trip(path)
    assert {solution: found for solution, found in problems.items() if found} == {}
    for index, (before, after) in enumerate(zip(first, second)):
        assert shown(after) == shown(before), f"{path.name}: code cell {index} shows something else after the solutions"


def test_the_round_trip_finds_a_solution_that_rebinds_a_name_or_reconfigures_the_ipus(tmp_path):
    """The check itself: a solution that rebinds the notebook's `batch` and leaves other IPUs configured."""
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "99_exercise_1.py").write_text(
        "from ipu_teach import ipu\n"
        "batch = 32\n"
        "config = ipu.config.IPUConfig()\n"
        "config.auto_select_ipus = 2\n"
        "config.configure_ipu_system()\n"
    )
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("batch = 64\nprint(batch)"),
            nbformat.v4.new_markdown_cell("Solution: `%load solutions/99_exercise_1.py`, then run the cell again."),
            nbformat.v4.new_code_cell("print(batch * 2)"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(notebook, tmp_path / "99_check.ipynb")
    first, second, problems = round_trip(tmp_path / "99_check.ipynb")
    assert problems["solutions/99_exercise_1.py"][0] == "rebinds the notebook's `batch`"
    assert problems["solutions/99_exercise_1.py"][1].startswith("leaves the configured IPUs changed: ")
    assert (
        [shown(cell) for cell in second]
        == [shown(cell) for cell in first]
        == [[("stdout", "64\n")], [("stdout", "128\n")]]
    )
