"""The exercise solutions of notebook 05 run against the notebook's own helper (taken from the notebook)."""

import json
import re
from pathlib import Path

import pytest

import ipu_teach.keras as keras

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _notebook_namespace(reports):
    """Run the notebook's set-up cells (imports, data, model_fn, train) and section 2's report, writing
    the reports to ``reports``."""
    cells = [c for c in json.loads((NOTEBOOKS / "05_profiling.ipynb").read_text())["cells"] if c["cell_type"] == "code"]
    keras.backend.clear_session()  # layer names as in a fresh kernel, whatever ran before in this process
    namespace = {}
    wanted = ("REPORTS =", "def train(", "report = train()")
    for cell in cells:
        source = "".join(cell["source"])
        if any(marker in source for marker in wanted):
            exec(source.replace("%matplotlib inline", ""), namespace)
            if "REPORTS =" in source:
                namespace["REPORTS_FOLDER"].cleanup()
                namespace["REPORTS"] = reports
    namespace["compilation"] = namespace["report"].compilation
    return namespace


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    return _notebook_namespace(tmp_path_factory.mktemp("reports"))


@pytest.mark.slow
@pytest.mark.parametrize("exercise", [1, 2, 3])
def test_solution_runs_and_answers(exercise, notebook, capsys):
    namespace = dict(notebook)
    capsys.readouterr()
    configured_before = namespace["ipu"].system.current()
    exec((NOTEBOOKS / "solutions" / f"05_exercise_{exercise}.py").read_text(), namespace)
    text = capsys.readouterr().out
    expected = {1: "bytes of activations over the IPU", 2: "difference", 3: "largest micro-batch that fits"}[exercise]
    assert expected in text
    assert namespace["ipu"].system.current() is configured_before  # the notebook's IPUs are back
    if exercise == 1:  # layers are listed largest first: the first convolution holds the most activations
        layers = [line.split()[0] for line in text.splitlines() if "bytes of activations" in line]
        assert layers[0] == "conv2d"
        compilation = notebook["report"].compilation
        memory = compilation.tile_memory(0)
        assert f"fullest tile {int(memory.argmax())}: {int(memory.max()):,} bytes" in text
        printed = {
            layer: int(nbytes.replace(",", ""))
            for layer, nbytes in re.findall(r"^(\S+) +([\d,]+) bytes of activations", text, re.MULTILINE)
        }
        activations = [v for v in compilation.variables if v.category == "activations"]
        assert sum(printed.values()) == sum(v.size for v in activations)  # every activation, counted once
        assert printed["conv2d"] == sum(v.size for v in activations if v.name.startswith("conv2d/"))
    if exercise == 2:  # the same cycles per step, and 8 times the cycles per execution
        one, eight = namespace["one"], namespace["eight"]
        assert eight.execution.total_cycles() == pytest.approx(8 * one.execution.total_cycles(), rel=0.01)
        per_step = [report.execution.total_cycles() / count for report, count in ((one, 1), (eight, 8))]
        assert f"cycles per step: {per_step[0]:,.0f} -> {per_step[1]:,.0f}" in text
        assert namespace["profiling"].compare_reports(one, eight) in text
    if exercise == 3:
        fits = int(text.split("(multiple of 8): ")[1].split(";")[0])
        assert fits == namespace["fits"] and f"; {namespace['does_not_fit']} does not" in text
        assert 32 <= fits < 256 and fits % 8 == 0
        namespace["train"](batch_size=fits, tiles=64, samples=2 * fits, steps_per_execution=2)  # fits ...
        with pytest.raises(namespace["ipu"].ModelOutOfMemoryError):  # ... and the next multiple of 8 does not
            namespace["train"](batch_size=fits + 8, tiles=64, samples=2 * (fits + 8), steps_per_execution=2)
