"""The examples in ipu-teach's docstrings, and how the suite runs one: a fresh session (``reset_session``), the
portable numerics the root conftest turns on, ``np``, ``keras`` (``ipu_teach.keras``) and ``ipu`` (``ipu_teach.ipu``)
imported, as Keras' own examples assume ``tf`` and ``keras``."""

import doctest
import functools
import importlib
import pkgutil
from pathlib import Path

import numpy as np

import ipu_teach
import ipu_teach.keras
from ipu_teach import ipu

PACKAGE = Path(ipu_teach.__file__).parent
GLOBALS = {"np": np, "keras": ipu_teach.keras, "ipu": ipu}


@functools.cache
def package_examples() -> dict:
    """{dotted name: doctest} of every docstring with an example in the package and its own modules (found once a
    process: ``test_module_doctests`` runs them, ``test_docstrings`` reads them)."""
    found = {}
    names = ["ipu_teach"] + [module.name for module in pkgutil.walk_packages(ipu_teach.__path__, "ipu_teach.")]
    for name in names:
        for test in doctest.DocTestFinder().find(importlib.import_module(name), extraglobs=GLOBALS):
            if test.examples and test.filename and Path(test.filename).is_relative_to(PACKAGE):
                found.setdefault(test.name, test)
    return found


def own_examples(obj, name: str) -> list:
    """The doctests of ``obj``'s own docstring (not its members')."""
    return [test for test in doctest.DocTestFinder(recurse=False).find(obj, name=name, globs=GLOBALS) if test.examples]


def example_text(test) -> str:
    """A doctest's docstring: the same example whichever name it was found under (doctest cannot always tell its
    line: a property's, a decorated function's)."""
    return test.docstring


def run(test) -> None:
    """Runs one docstring's doctest in a fresh session, from the module's own names; fails with doctest's report."""
    ipu_teach.reset_session()
    test.globs = {**test.globs}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
