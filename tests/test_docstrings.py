"""Every public name the notebooks use has a Keras-style docstring whose example runs (issue 14).

The names come from ``notebook_public_names`` (the notebooks' and solutions' code, resolved by importing).
Each docstring must be the object's own (not inherited from a base class), have an ``Example:`` section
with a doctest, and that doctest must pass: run in a fresh session (``ipu_teach.reset_session()``), with the
portable numerics the root conftest turns on, and ``np``, ``keras`` (``ipu_teach.keras``) and ``ipu``
(``ipu_teach.ipu``) imported, as Keras' own examples assume ``tf`` and ``keras``. Setup that several examples
need (a small profiled model, a small Poplar graph, a pipelined model) is built by the public helpers of
``ipu_teach.examples``, whose own examples are run here too.
"""

import doctest
import inspect
import json
import re

import numpy as np
import pytest
from notebook_public_names import notebook_public_names, resolve

import ipu_teach
import ipu_teach.examples
import ipu_teach.keras
from ipu_teach import ipu

USED = notebook_public_names()

EXAMPLE_SECTION = re.compile(r"^\s*Examples?:\s*$", re.MULTILINE)


def own_docstring(obj) -> str:
    """The docstring written for ``obj`` itself: a class without one would otherwise show its base's."""
    if isinstance(obj, type):
        return vars(obj).get("__doc__") or ""
    return getattr(obj, "__doc__", None) or ""


def test_the_notebooks_use_the_names_the_course_is_built_on():
    for path in (
        "ipu_teach.keras.layers.core.Dense",
        "ipu_teach.keras.layers.convolutional.Conv2D",
        "ipu_teach.keras.models.Model.fit",
        "ipu_teach.ipu.config.IPUConfig",
        "ipu_teach.keras.ipu.pipeline_stage.PipelineStage",
        "ipu_teach.bsp.poplar.Engine.run",
        "ipu_teach.profiling.files.open_report",
    ):
        assert path in USED, f"{path} is no longer found in the notebooks: is notebook_public_names still reading them?"


def test_names_are_found_through_imports_calls_and_solutions(tmp_path):
    """Methods are found on what a class, an annotated function or a notebook function returns, and a
    solution is read in its notebook's namespace; plain Python names are not ipu_teach's."""
    (tmp_path / "notebooks" / "solutions").mkdir(parents=True)
    cells = [
        "%matplotlib inline\nimport ipu_teach.keras as keras\nfrom ipu_teach import profiling\n",
        "def build():\n    return keras.Sequential([keras.layers.Reshape((4,))])\n",
        "model = build()\nmodel.predict(x)\nreport = profiling.open_report('r')\nitems = [].append(1)\n",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "source": cell} for cell in cells],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "notebooks" / "09_fake.ipynb").write_text(json.dumps(notebook))
    (tmp_path / "notebooks" / "solutions" / "09_exercise_1.py").write_text("report.execution.total_cycles()\n")
    found = notebook_public_names(tmp_path)
    assert {
        "ipu_teach.keras.layers.core.Reshape",
        "ipu_teach.keras.models.Sequential",
        "ipu_teach.keras.models.Model.predict",
        "ipu_teach.profiling.files.open_report",
        "ipu_teach.profiling.report.Execution.total_cycles",
    } <= set(found)
    assert (
        found["ipu_teach.profiling.report.Execution.total_cycles"].first_use == "notebooks/solutions/09_exercise_1.py:1"
    )
    assert all(path.startswith("ipu_teach") for path in found)


@pytest.mark.parametrize("path", sorted(USED))
def test_docstring_has_an_example(path):
    used = USED[path]
    docstring = own_docstring(resolve(used))
    missing = [
        what
        for what, ok in (
            ("a docstring", docstring.strip()),
            ("an 'Example:' section", EXAMPLE_SECTION.search(docstring)),
            ("a '>>>' doctest", ">>>" in docstring),
        )
        if not ok
    ]
    assert not missing, (
        f"{path} (used at {used.first_use}) lacks {', '.join(missing)}. Notebooks only use "
        "documented names: give it a Keras-style docstring (summary, why, Args:, Returns:, "
        "Example: with a short >>> doctest)."
    )


def run_example(obj, path):
    """Runs the doctests of ``obj``'s own docstring in a fresh session; fails with doctest's report."""
    ipu_teach.reset_session()
    tests = doctest.DocTestFinder(recurse=False).find(
        obj, name=path, globs={"np": np, "keras": ipu_teach.keras, "ipu": ipu}
    )
    examples = [test for test in tests if test.examples]
    assert examples, f"{path} has no doctest to run"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in examples:
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


@pytest.mark.parametrize("path", sorted(USED))
def test_docstring_example_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    run_example(resolve(USED[path]), path)


# The fixtures the examples share (a small report, a small Poplar graph...): their own examples run too.
SHARED_FIXTURES = sorted(
    name
    for name, obj in vars(ipu_teach.examples).items()
    if inspect.isfunction(obj) and obj.__module__ == "ipu_teach.examples" and name[0] != "_"
)


def test_the_shared_fixtures_are_found():
    assert {"small_report", "add_one_graph", "small_timeline", "two_stage_model"} <= set(SHARED_FIXTURES)


@pytest.mark.parametrize("name", SHARED_FIXTURES)
def test_shared_fixture_has_a_running_example(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fixture = getattr(ipu_teach.examples, name)
    assert EXAMPLE_SECTION.search(own_docstring(fixture)), f"ipu_teach.examples.{name} needs an 'Example:' section"
    run_example(fixture, f"ipu_teach.examples.{name}")
