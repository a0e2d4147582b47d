"""Every public name the notebooks use has a Keras-style docstring whose example runs (issue 14).

The names come from ``notebook_public_names`` (the notebooks' and solutions' code, resolved by importing).
Each docstring must be the object's own (not inherited from a base class) and have an ``Example:`` section
with a doctest, which ``test_module_doctests`` runs with every other example of the package (as
:mod:`docstring_examples` says). Setup that several examples need (a small profiled model, a small Poplar graph,
a pipelined model) is built by the public helpers of ``ipu_teach.examples``, whose own examples run there too.
"""

import inspect
import json
import re

import pytest
from docstring_examples import example_text, own_examples, package_examples
from notebook_public_names import notebook_public_names, resolve

import ipu_teach.examples

USED = notebook_public_names()
RUN = {example_text(test) for test in package_examples().values()}
"""Every example ``test_module_doctests`` runs."""

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


def assert_run(obj, path):
    """``obj``'s own docstring has a doctest, one of those ``test_module_doctests`` runs."""
    examples = own_examples(obj, path)
    assert examples, f"{path} has no doctest to run"
    assert all(example_text(test) in RUN for test in examples), f"{path}'s example is not among the package's"


@pytest.mark.parametrize("path", sorted(USED))
def test_docstring_example_is_run(path):
    assert_run(resolve(USED[path]), path)


# The fixtures the examples share (a small report, a small Poplar graph...): their own examples run too.
SHARED_FIXTURES = sorted(
    name
    for name, obj in vars(ipu_teach.examples).items()
    if inspect.isfunction(obj) and obj.__module__ == "ipu_teach.examples" and name[0] != "_"
)


def test_the_shared_fixtures_are_found():
    assert {"small_report", "add_one_graph", "small_timeline", "two_stage_model"} <= set(SHARED_FIXTURES)


@pytest.mark.parametrize("name", SHARED_FIXTURES)
def test_shared_fixture_has_a_running_example(name):
    fixture = getattr(ipu_teach.examples, name)
    assert EXAMPLE_SECTION.search(own_docstring(fixture)), f"ipu_teach.examples.{name} needs an 'Example:' section"
    assert_run(fixture, f"ipu_teach.examples.{name}")
