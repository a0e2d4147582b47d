"""The examples in the docstrings of ipu_teach.torch, torchvision and poptorch run (they are not yet reached by
a notebook, so tests/test_docstrings.py does not run them)."""

import doctest
import importlib
import pkgutil

import numpy as np
import pytest

import ipu_teach

PACKAGES = ("ipu_teach.torch", "ipu_teach.torchvision", "ipu_teach.poptorch")
MODULES = sorted(
    {name for package in PACKAGES for name in [package]}
    | {
        info.name
        for package in PACKAGES
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + ".")
    }
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ipu_teach.reset_session()
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in finder.find(module, name, globs={"np": np}):
        if test.examples and (test.name == name or test.name.startswith(name + ".")):
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
