"""Every example in ipu-teach's docstrings runs and prints what it says, not only those of the names the notebooks
use (``test_docstrings.py`` checks those have one): a docstring's simulated figures go stale when the cost model
changes, and an example the suite never runs goes stale unseen. Each runs as :mod:`docstring_examples` says, in a
folder of its own."""

import pytest
from docstring_examples import package_examples, run

EXAMPLES = package_examples()


def test_the_package_s_examples_are_found():
    assert len(EXAMPLES) > 300
    assert "ipu_teach.ipu.reduce_vertex.cycles" in EXAMPLES and "ipu_teach.hardware.HostSpec" in EXAMPLES


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_docstring_example_prints_what_it_says(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes files writes them here
    run(EXAMPLES[name])
