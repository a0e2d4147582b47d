"""Every example in ipu-teach's docstrings runs and prints what it says, not only those of the names the notebooks
use (``test_docstrings.py``): a docstring's simulated figures go stale when the cost model changes, and an example
the suite never runs goes stale unseen. Each runs as ``test_docstrings`` runs one: a fresh session, the portable
numerics the root conftest turns on, ``np``, ``keras`` and ``ipu`` imported, in a folder of its own."""

import doctest
import importlib
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import ipu_teach
import ipu_teach.keras
from ipu_teach import ipu

PACKAGE = Path(ipu_teach.__file__).parent
GLOBALS = {"np": np, "keras": ipu_teach.keras, "ipu": ipu}


def docstring_examples() -> dict:
    """{dotted name: doctest} of every docstring with an example in the package's own modules."""
    found = {}
    for module in pkgutil.walk_packages(ipu_teach.__path__, "ipu_teach."):
        for test in doctest.DocTestFinder().find(importlib.import_module(module.name), extraglobs=GLOBALS):
            if test.examples and test.filename and Path(test.filename).is_relative_to(PACKAGE):
                found.setdefault(test.name, test)
    return found


EXAMPLES = docstring_examples()


def test_the_package_s_examples_are_found():
    assert len(EXAMPLES) > 300
    assert "ipu_teach.ipu.reduce_vertex.cycles" in EXAMPLES and "ipu_teach.hardware.HostSpec" in EXAMPLES


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_docstring_example_prints_what_it_says(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    ipu_teach.reset_session()
    test = EXAMPLES[name]
    test.globs = {**test.globs}  # each run starts from the module's own names
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
