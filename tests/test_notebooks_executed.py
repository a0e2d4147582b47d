"""The committed notebooks are what nbval compares against, so they must be complete and listed.

nbval passes a notebook committed without outputs silently (there is nothing to compare), so this
checks that every committed notebook was fully executed; it also keeps the README's course map in
step with notebooks/, and checks the nbval sanitize rules on examples.
"""

import importlib.util
import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import get_sanitize_patterns

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
# nbval tests every notebook below notebooks/ (pytest skips hidden folders such as .ipynb_checkpoints);
# the course map lists the course's notebooks, those directly in notebooks/.
ALL_NOTEBOOKS = sorted(
    path
    for path in NOTEBOOK_DIR.rglob("*.ipynb")
    if not any(part.startswith(".") for part in path.relative_to(NOTEBOOK_DIR).parts)
)
COURSE_NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
SANITIZE_FILE = REPO_ROOT / "tests" / "nbval_sanitize.cfg"
_spec = importlib.util.spec_from_file_location("execute_notebooks", REPO_ROOT / "tools" / "execute_notebooks.py")
execute_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(execute_notebooks)


def execution_problems(notebook):
    """List what shows that `notebook` (parsed JSON) was not fully executed by a python3 kernel."""
    problems = []
    kernel_name = notebook.get("metadata", {}).get("kernelspec", {}).get("name")
    if kernel_name != "python3":
        problems.append(f"kernelspec name is {kernel_name!r}, expected 'python3'")
    code_cells = [
        (index, cell)
        for index, cell in enumerate(notebook.get("cells", []))
        if cell.get("cell_type") == "code" and "".join(cell.get("source", "")).strip()
    ]
    for expected_count, (index, cell) in enumerate(code_cells, start=1):
        if cell.get("execution_count") != expected_count:
            problems.append(f"cell {index}: execution_count {cell.get('execution_count')}, expected {expected_count}")
        tags = cell.get("metadata", {}).get("tags", [])
        errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
        if errors and "raises-exception" not in tags:
            problems.append(f"cell {index}: raised {errors[0].get('ename')} but is not tagged 'raises-exception'")
    return problems


ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
# An absolute path of some machine: /home/you/..., /work/main/..., /Users/..., C:\\...
MACHINE_PATH = re.compile(r"(?<![\w.~-])(?:/(?:home|work|Users|root|tmp|opt|usr|var|srv|mnt|private)/|[A-Za-z]:\\)\S*")


def machine_specific_paths(notebook):
    """Absolute paths in any committed output (text, data or traceback): they differ from machine to
    machine, and show a learner someone else's folders."""
    found = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            texts = [
                output.get("text", ""),
                output.get("evalue", ""),
                *output.get("traceback", []),
                *(value for key, value in output.get("data", {}).items() if key.startswith("text/")),
            ]
            for text in texts:
                text = ANSI_ESCAPE.sub("", "".join(text) if isinstance(text, list) else text)
                found += [f"cell {index}: {match}" for match in MACHINE_PATH.findall(text)]
    return found


def course_map_problems(readme_text, notebook_names):
    """List mismatches between the README's course map table and the notebooks that exist."""
    section = re.search(r"^## Course map\n(.*?)(?=^## |\Z)", readme_text, re.MULTILINE | re.DOTALL)
    if section is None:
        return ["README has no '## Course map' section"]
    rows = [line for line in section.group(1).splitlines() if line.startswith("|")][2:]
    problems = []
    linked = set()
    for row in rows:
        links = re.findall(r"\]\(notebooks/([^)\s]+\.ipynb)\)", row)
        if not links and "(coming)" not in row:
            problems.append(f"course map row neither links a notebook nor says '(coming)': {row}")
        linked.update(links)
    for name in sorted(linked - set(notebook_names)):
        problems.append(f"course map links notebooks/{name}, which does not exist")
    for name in sorted(set(notebook_names) - linked):
        problems.append(f"notebooks/{name} is not linked from the README course map")
    return problems


def sanitize(text):
    """Apply the sanitize rules the way nbval does."""
    for regex, replace in get_sanitize_patterns(SANITIZE_FILE.read_text(encoding="utf-8")):
        text = re.sub(regex, replace, text)
    return text


def _code_cell(count, source="x = 1", outputs=(), tags=()):
    metadata = {"tags": list(tags)} if tags else {}
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": metadata,
        "outputs": list(outputs),
        "source": source,
    }


def _notebook(cells, kernel_name="python3"):
    return {"cells": cells, "metadata": {"kernelspec": {"name": kernel_name}}, "nbformat": 4, "nbformat_minor": 5}


ERROR_OUTPUT = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": []}


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[str(p.relative_to(NOTEBOOK_DIR)) for p in ALL_NOTEBOOKS])
def test_committed_notebook_is_fully_executed(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    relative = path.relative_to(REPO_ROOT).as_posix()
    assert execution_problems(notebook) == [], (
        f"{relative} is not fully executed; run: python tools/execute_notebooks.py {relative}"
    )


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=[str(p.relative_to(NOTEBOOK_DIR)) for p in ALL_NOTEBOOKS])
def test_committed_outputs_name_no_path_of_the_machine_that_ran_them(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert machine_specific_paths(notebook) == []


def test_machine_paths_are_found_and_execution_strips_the_repository_from_tracebacks():
    frame = f"\x1b[36mFile \x1b[32m{execute_notebooks.REPO_ROOT}/ipu_teach/keras/models.py:248\x1b[39m, in fit"
    error = {"output_type": "error", "ename": "ValueError", "evalue": "bad", "traceback": [frame]}
    notebook = nbformat.from_dict(_notebook([_code_cell(1, outputs=[error])]))
    if str(execute_notebooks.REPO_ROOT).startswith(("/home/", "/work/", "/Users/", "/root/", "/tmp/")):
        assert machine_specific_paths(notebook) != []
    execute_notebooks.without_machine_paths(notebook)
    assert (
        ANSI_ESCAPE.sub("", notebook.cells[0].outputs[0]["traceback"][0])
        == "File ipu_teach/keras/models.py:248, in fit"
    )
    assert machine_specific_paths(notebook) == []
    text = {"output_type": "stream", "name": "stdout", "text": "saved to /home/ada/reports and C:\\Users\\ada\n"}
    assert machine_specific_paths(_notebook([_code_cell(1, outputs=[text])])) == [
        "cell 0: /home/ada/reports",
        "cell 0: C:\\Users\\ada",
    ]


def test_kernels_get_a_fixed_hash_seed_and_portable_numerics_when_testing_and_when_executing():
    """Sets of strings print in hash order, and float32 training depends on the CPU's BLAS: every
    notebook kernel must see the same PYTHONHASHSEED and portable numerics."""
    for name, value in (("PYTHONHASHSEED", "0"), ("IPU_TEACH_PORTABLE_NUMERICS", "1")):
        assert os.environ.get(name) == value  # set by conftest.py before nbval starts kernels
        assert execute_notebooks.kernel_environment()[name] == value


def test_readme_course_map_lists_exactly_the_notebooks():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert course_map_problems(readme, [path.name for path in COURSE_NOTEBOOKS]) == []


def test_executed_notebook_passes():
    markdown = {"cell_type": "markdown", "metadata": {}, "source": "# Title"}
    empty = _code_cell(None, source="  \n")
    cells = [markdown, _code_cell(1), empty, _code_cell(2, outputs=[ERROR_OUTPUT], tags=["raises-exception"])]
    assert execution_problems(_notebook(cells)) == []


@pytest.mark.parametrize(
    "cells, kernel_name, expected",
    [
        ([_code_cell(1), _code_cell(None)], "python3", "cell 1: execution_count None, expected 2"),
        ([_code_cell(2), _code_cell(1)], "python3", "cell 0: execution_count 2, expected 1"),
        ([_code_cell(1, outputs=[ERROR_OUTPUT])], "python3", "cell 0: raised ValueError"),
        ([_code_cell(1)], "python", "kernelspec name is 'python'"),
    ],
    ids=["unexecuted cell", "out of order", "untagged error", "wrong kernel"],
)
def test_unfinished_notebook_is_reported(cells, kernel_name, expected):
    problems = execution_problems(_notebook(cells, kernel_name))
    assert any(problem.startswith(expected) for problem in problems), problems


COURSE_MAP = """## Course map

| notebook | teaches |
|---|---|
| [00 IPU and BSP](notebooks/00_ipu.ipynb) | tiles |
| 01 Porting (coming) | porting |

## Data
"""


@pytest.mark.parametrize(
    "readme, notebook_names, expected",
    [
        (COURSE_MAP, ["00_ipu.ipynb"], []),
        (COURSE_MAP, [], ["course map links notebooks/00_ipu.ipynb, which does not exist"]),
        (
            COURSE_MAP,
            ["00_ipu.ipynb", "01_port.ipynb"],
            ["notebooks/01_port.ipynb is not linked from the README course map"],
        ),
        (
            COURSE_MAP.replace(" (coming)", ""),
            ["00_ipu.ipynb"],
            ["course map row neither links a notebook nor says '(coming)': | 01 Porting | porting |"],
        ),
        ("# Title\n", [], ["README has no '## Course map' section"]),
    ],
    ids=["in step", "missing notebook", "unlisted notebook", "row without status", "no section"],
)
def test_course_map_problems(readme, notebook_names, expected):
    assert course_map_problems(readme, notebook_names) == expected


@pytest.mark.parametrize(
    "noisy, clean",
    [
        (
            "938/938 [==============================] - 3s 3ms/step - loss: 0.3175 - accuracy: 0.9047\n",
            "938/938 [==============================] - Xs Xms/step - loss: 0.3175 - accuracy: 0.9047\n",
        ),
        ("10/10 [====] - 0s 175us/step\n", "10/10 [====] - Xs Xms/step\n"),
        ("938/938 - 3s - loss: 0.31 - 3s/epoch - 3ms/step\n", "938/938 - Xs - loss: 0.31 - X/epoch - X/step\n"),
        (
            " 12/938 [>.....] - ETA: 1s - loss: 2.1\r 24/938 [>.....] - ETA: 0:01:05 - loss: 2.0",
            " 12/938 [>.....] - ETA: Xs - loss: 2.1\r 24/938 [>.....] - ETA: Xs - loss: 2.0",
        ),
        ("CPU times: user 1.2 s, sys: 10 ms, total: 1.21 s\nWall time: 1.5 s\n", "CPU times: T\nWall time: T\n"),
        ("<Figure size 640x480 with 1 Axes at 0x7f3a2c1d9e50>", "<Figure size 640x480 with 1 Axes at 0xADDR>"),
        ("/tmp/ipykernel_4242/1234567.py:3: UserWarning: careful", "<ipykernel>/CELL.py:3: UserWarning: careful"),
        ("report written 2026-11-22T11:40:03.123Z on 2026-11-22", "report written DATE on DATE"),
    ],
    ids=[
        "step time",
        "microseconds",
        "verbose 2",
        "ETA with carriage returns",
        "%time",
        "address",
        "kernel file",
        "dates",
    ],
)
def test_sanitize_masks_wall_clock_noise(noisy, clean):
    assert sanitize(noisy) == clean


@pytest.mark.parametrize(
    "kept",
    [
        "938/938 [==============================] - 0.52s 0.55ms/step (simulated) - loss: 0.3175\n",
        "simulated: 12/12 - 1s 84ms/step\n",
        "tile 17 holds 0x4c000 bytes\n",
        "accuracy: 0.9609, 60000/60000 samples\n",
    ],
    ids=["simulated step time", "simulated epoch", "short hex", "plain numbers"],
)
def test_sanitize_keeps_simulated_and_deterministic_output(kept):
    assert sanitize(kept) == kept


def test_sanitize_file_rules_all_parse():
    text = SANITIZE_FILE.read_text(encoding="utf-8")
    rules = get_sanitize_patterns(text)
    assert len(rules) == text.count("\nregex: "), "every 'regex:' line needs a 'replace:' line right after it"
    for regex, _ in rules:
        re.compile(regex)
